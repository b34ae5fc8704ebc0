package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strings"

	"github.com/parentrag/parentrag/internal/index/bm25"
)

// Writer collects the parents and children of one segment, in slot order,
// and encodes them. A segment is meant to hold a bounded group of
// documents, so the writer keeps it in memory until Bytes. Postings are
// kept in the order they are added, all terms together, and put in term
// order once, by Bytes.
type Writer struct {
	contexts bool
	terms    map[string]int // the index of each term in names
	names    []string
	children chunkedList[childPosting]  // every child posting, in slot order
	parents  chunkedList[parentPosting] // every parent posting, in parent order
	childN   []uint32                   // by term: its child postings so far
	parentN  []uint32                   // by term: its parent postings so far
	lastOf   []uint32                   // by term: 1 + the last parent given a posting of it, 0 for none
	h        header
	first    []uint32 // parentFirst without its end
	ctxLen   []uint32 // by parent
	childLen []uint32
	idEnds   []uint32
	ids      []byte
	ordinals []uint32
	parentID idArena  // each parent's id
	docs     idArena  // each run of parents' document id
	docOf    []uint32 // by parent: its document's index in docs
	keys     []int    // the term indices of the analysis being added
	seen     []uint32 // by term: the stamp of the last analysis holding it
	stamp    uint32
}

// childPosting is a child holding a term: the term's index, the child's
// slot and the term's frequency there.
type childPosting struct{ term, slot, tf uint32 }

// parentPosting is a parent whose context or children hold a term: the
// term's index, the parent, the term's frequency in the context, and
// where the parent's children's postings of the term begin among the
// term's child postings.
type parentPosting struct{ term, parent, context, first uint32 }

// ErrNoParent is returned by AddChild before any AddParent.
var ErrNoParent = errors.New("segment: a child needs a parent added before it")

// NewWriter returns an empty segment writer; contexts says whether its
// parents carry contexts (a context weight above zero).
func NewWriter(contexts bool) *Writer {
	w := &Writer{contexts: contexts, terms: map[string]int{}}
	if contexts {
		w.h.flags |= flagContexts
	}
	return w
}

// Reset empties the writer for the next segment, keeping the memory the
// last one grew, as NewWriter(contexts) would return it.
func (w *Writer) Reset(contexts bool) {
	clear(w.terms)
	w.children.reset()
	w.parents.reset()
	*w = Writer{
		contexts: contexts, terms: w.terms, names: w.names[:0],
		children: w.children, parents: w.parents,
		childN: w.childN[:0], parentN: w.parentN[:0], lastOf: w.lastOf[:0],
		first: w.first[:0], ctxLen: w.ctxLen[:0], childLen: w.childLen[:0],
		idEnds: w.idEnds[:0], ids: w.ids[:0], ordinals: w.ordinals[:0],
		parentID: w.parentID.emptied(), docs: w.docs.emptied(), docOf: w.docOf[:0],
		keys: w.keys[:0], seen: w.seen[:0], stamp: w.stamp,
	}
	if contexts {
		w.h.flags |= flagContexts
	}
}

// AddParent starts the next parent, with its id, its document's id and
// its context's analysis (ignored by a writer without contexts). The
// children added after it, until the next AddParent, are its own.
func (w *Writer) AddParent(id, doc string, context bm25.Analysis) error {
	if w.h.parents == math.MaxUint32-1 {
		return fmt.Errorf("segment: more than %d parents", math.MaxUint32-1)
	}
	if !w.contexts {
		context = bm25.Analysis{}
	}
	if err := w.resolve(context); err != nil {
		return fmt.Errorf("segment: context of parent %q: %w", id, err)
	}
	if !w.parentID.fits(id) || !w.docs.fits(doc) {
		return fmt.Errorf("segment: parent or document ids exceed %d bytes", uint32(math.MaxUint32))
	}
	parent := w.h.parents
	w.h.parents++
	w.parentID.add(id)
	if !w.docs.lastIs(doc) {
		w.docs.add(doc)
	}
	w.docOf = append(w.docOf, uint32(w.docs.len()-1))
	w.first = append(w.first, w.h.children)
	w.ctxLen = append(w.ctxLen, uint32(context.Tokens))
	for i, k := range w.keys {
		w.addParentPosting(k, parent, context.Counts[i])
	}
	return nil
}

// AddChild adds the next child, of the last parent added, with its id,
// its ordinal within its document and the analysis of its embedded text.
func (w *Writer) AddChild(id string, ordinal int, a bm25.Analysis) error {
	if w.h.parents == 0 {
		return ErrNoParent
	}
	if w.h.children == math.MaxUint32 {
		return fmt.Errorf("segment: more than %d children", uint32(math.MaxUint32))
	}
	if ordinal < 0 || uint64(ordinal) > math.MaxUint32 {
		return fmt.Errorf("segment: child %q: ordinal %d is out of range", id, ordinal)
	}
	if err := w.resolve(a); err != nil {
		return fmt.Errorf("segment: child %q: %w", id, err)
	}
	if uint64(len(w.ids))+uint64(len(id)) > math.MaxUint32 {
		return fmt.Errorf("segment: child ids exceed %d bytes", uint32(math.MaxUint32))
	}
	slot, parent := w.h.children, w.h.parents-1
	w.h.children++
	w.h.tokens += uint64(a.Tokens)
	w.childLen = append(w.childLen, uint32(a.Tokens))
	w.ids = append(w.ids, id...)
	w.idEnds = append(w.idEnds, uint32(len(w.ids)))
	w.ordinals = append(w.ordinals, uint32(ordinal))
	for i, k := range w.keys {
		if w.lastOf[k] != parent+1 {
			w.addParentPosting(k, parent, 0)
		}
		w.children.add(childPosting{term: uint32(k), slot: slot, tf: a.Counts[i]})
		w.childN[k]++
	}
	return nil
}

// addParentPosting gives parent a posting of term k, with the term's
// frequency in its context, before any child of it holding the term.
func (w *Writer) addParentPosting(k int, parent, context uint32) {
	w.parents.add(parentPosting{term: uint32(k), parent: parent, context: context, first: w.childN[k]})
	w.parentN[k]++
	w.lastOf[k] = parent + 1
}

// resolve sets w.keys to the index of each term of a, refusing an
// analysis a segment cannot store: one given as ids, with counts that do
// not follow its terms, a repeated term, a zero count or a length beyond
// 32 bits. A refused analysis adds no posting (its terms may stay in the
// writer's table, which Bytes leaves out while they have none).
func (w *Writer) resolve(a bm25.Analysis) error {
	switch {
	case a.Terms == nil && len(a.IDs) > 0:
		return errors.New("analysis given as term ids; a segment stores terms")
	case len(a.Counts) != len(a.Terms):
		return fmt.Errorf("%d counts for %d terms", len(a.Counts), len(a.Terms))
	case a.Tokens < 0 || uint64(a.Tokens) > math.MaxUint32:
		return fmt.Errorf("length %d tokens is out of range", a.Tokens)
	}
	if w.stamp++; w.stamp == 0 { // wrapped: no stale stamp may match
		clear(w.seen)
		w.stamp = 1
	}
	w.keys = w.keys[:0]
	for i, t := range a.Terms {
		if a.Counts[i] == 0 {
			return fmt.Errorf("term %q has a zero count", t)
		}
		k := w.term(t)
		if w.seen[k] == w.stamp {
			return fmt.Errorf("term %q repeats", t)
		}
		w.seen[k] = w.stamp
		w.keys = append(w.keys, k)
	}
	return nil
}

// term returns the index of t among the writer's terms, adding it.
func (w *Writer) term(t string) int {
	if k, ok := w.terms[t]; ok {
		return k
	}
	k := len(w.names)
	w.names = append(w.names, strings.Clone(t))
	w.terms[w.names[k]] = k
	w.childN = append(w.childN, 0)
	w.parentN = append(w.parentN, 0)
	w.lastOf = append(w.lastOf, 0)
	w.seen = append(w.seen, 0)
	return k
}

// AppendTo appends the encoded segment to dst and returns the extended
// slice, so that the memory of one segment's bytes can take the next
// one's. The same parents, children and analyses, added in the same
// order, give the same bytes.
func (w *Writer) AppendTo(dst []byte) ([]byte, error) {
	order := make([]int, 0, len(w.names))
	for k := range w.names {
		if w.parentN[k] > 0 { // a term of a refused analysis has none
			order = append(order, k)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(w.names[a], w.names[b]) })
	h := w.h
	h.terms = uint32(len(order))
	var termArena []byte
	for _, k := range order {
		termArena = append(termArena, w.names[k]...)
	}
	childPostings, parentPostings := uint64(w.children.len()), uint64(w.parents.len())
	if max(uint64(len(termArena)), childWords*childPostings, parentWords*parentPostings) > math.MaxUint32 {
		return nil, fmt.Errorf("segment: more than %d words of postings or bytes of terms", uint32(math.MaxUint32))
	}
	h.termBytes, h.idBytes = uint32(len(termArena)), uint32(len(w.ids))
	h.docs, h.parentIDBytes, h.docIDBytes = uint32(w.docs.len()), uint32(len(w.parentID.bytes)), uint32(len(w.docs.bytes))
	h.childPostings, h.parentPostings = uint32(childPostings), uint32(parentPostings)
	start := len(dst)
	b := grown(dst, headerSize+4*int(h.words())+trailerSize)
	b = h.appendTo(b)
	b = appendWords(b, w.childLen)
	b = appendWords(b, w.first)
	b = binary.LittleEndian.AppendUint32(b, h.children)
	b = appendWords(b, w.ctxLen)
	b = appendEnds(b, order, func(k int) int { return len(w.names[k]) })
	b = appendEnds(b, order, func(k int) int { return int(w.childN[k]) })
	b = w.appendChildPostings(b, order)
	b = appendEnds(b, order, func(k int) int { return int(w.parentN[k]) })
	b = w.appendParentPostings(b, order)
	b = appendWords(b, w.idEnds)
	b = appendWords(b, w.ordinals)
	b = appendWords(b, w.docOf)
	b = appendWords(b, w.parentID.ends)
	b = appendWords(b, w.docs.ends)
	b = appendArena(b, termArena)
	b = appendArena(b, w.ids)
	b = appendArena(b, w.parentID.bytes)
	b = appendArena(b, w.docs.bytes)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli)), nil
}

// grown returns dst with room for n more bytes: dst itself when it has
// it, or a copy with a quarter more room than that, so that the memory of
// a segment's bytes takes the next few even when they are a little
// larger.
func grown(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	b := make([]byte, len(dst), len(dst)+n+n/4)
	copy(b, dst)
	return b
}

// appendEnds appends the running sum of size over order.
func appendEnds(b []byte, order []int, size func(int) int) []byte {
	end := uint32(0)
	for _, k := range order {
		end += uint32(size(k))
		b = binary.LittleEndian.AppendUint32(b, end)
	}
	return b
}

// termStarts returns, by term, where the term's postings start among all
// postings put in term order, each term holding count(k) of them.
func termStarts(n int, order []int, count []uint32) []uint32 {
	starts := make([]uint32, n)
	at := uint32(0)
	for _, k := range order {
		starts[k] = at
		at += count[k]
	}
	return starts
}

// appendChildPostings appends every child posting, term by term over
// order, each term's in slot order.
func (w *Writer) appendChildPostings(b []byte, order []int) []byte {
	return appendInTermOrder(b, &w.children, termStarts(len(w.names), order, w.childN), childWords, func(dst []byte, p *childPosting) {
		binary.LittleEndian.PutUint32(dst, p.slot)
		binary.LittleEndian.PutUint32(dst[4:], p.tf)
	})
}

// appendParentPostings appends every parent posting, term by term over
// order, each term's in parent order.
func (w *Writer) appendParentPostings(b []byte, order []int) []byte {
	return appendInTermOrder(b, &w.parents, termStarts(len(w.names), order, w.parentN), parentWords, func(dst []byte, p *parentPosting) {
		binary.LittleEndian.PutUint32(dst, p.parent)
		binary.LittleEndian.PutUint32(dst[4:], p.context)
		binary.LittleEndian.PutUint32(dst[8:], p.first)
	})
}

// termPosting is a posting that knows its term's index.
type termPosting interface{ termIndex() uint32 }

func (p *childPosting) termIndex() uint32  { return p.term }
func (p *parentPosting) termIndex() uint32 { return p.term }

// appendInTermOrder appends the postings of list, of words words each, in
// term order, each term's in the order they were added: a counting sort
// by term, written in place, at starts (termStarts) and after, by put.
func appendInTermOrder[T any, P interface {
	*T
	termPosting
}](b []byte, list *chunkedList[T], starts []uint32, words int, put func(dst []byte, p *T)) []byte {
	base := len(b)
	b = b[:base+4*words*list.len()]
	list.each(func(p *T) {
		k := P(p).termIndex()
		put(b[base+4*words*int(starts[k]):], p)
		starts[k]++
	})
	return b
}

// idArena collects strings end to end, with where each ends.
type idArena struct {
	ends  []uint32
	bytes []byte
}

// fits reports whether id can be added without the arena passing 32 bits.
func (a *idArena) fits(id string) bool {
	return uint64(len(a.bytes))+uint64(len(id)) <= math.MaxUint32
}

// add appends id.
func (a *idArena) add(id string) {
	a.bytes = append(a.bytes, id...)
	a.ends = append(a.ends, uint32(len(a.bytes)))
}

// emptied returns the arena emptied, with its memory.
func (a idArena) emptied() idArena { return idArena{ends: a.ends[:0], bytes: a.bytes[:0]} }

// len is the number of strings added.
func (a *idArena) len() int { return len(a.ends) }

// lastIs reports whether the last string added is id.
func (a *idArena) lastIs(id string) bool {
	return len(a.ends) > 0 && string(view(a.bytes, a.ends, len(a.ends)-1)) == id
}
