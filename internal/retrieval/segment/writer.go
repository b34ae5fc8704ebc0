package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
)

// Writer collects the parents and children of one segment, in slot order,
// and encodes them. A segment is meant to hold a bounded group of
// documents, so the writer keeps it in memory until Bytes.
type Writer struct {
	contexts bool
	terms    map[string]int // the index of each term in names
	names    []string
	child    [][]childPosting  // by term: the children holding it
	parent   [][]parentPosting // by term: the parents whose context or children hold it
	h        header
	first    []uint32 // parentFirst without its end
	ctxLen   []uint32 // by parent
	childLen []uint32
	idEnds   []uint32
	ids      []byte
	ordinals []uint32
	parents  idArena  // each parent's id
	docs     idArena  // each run of parents' document id
	docOf    []uint32 // by parent: its document's index in docs
	keys     []int    // the term indices of the analysis being added
	seen     []uint32 // by term: the stamp of the last analysis holding it
	stamp    uint32
}

// childPosting is a child holding a term: its slot and the term's
// frequency there.
type childPosting struct{ slot, tf uint32 }

// parentPosting is a parent whose context or children hold a term: the
// term's frequency in the context, and where its children's postings of
// the term begin among the term's child postings.
type parentPosting struct{ parent, context, first uint32 }

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

// AddParent starts the next parent, with its id, its document's id and
// its context's analysis (ignored by a writer without contexts). The
// children added after it, until the next AddParent, are its own.
func (w *Writer) AddParent(id, doc string, context embed.Analysis) error {
	if w.h.parents == math.MaxUint32-1 {
		return fmt.Errorf("segment: more than %d parents", math.MaxUint32-1)
	}
	if !w.contexts {
		context = embed.Analysis{}
	}
	if err := w.resolve(context); err != nil {
		return fmt.Errorf("segment: context of parent %q: %w", id, err)
	}
	if !w.parents.fits(id) || !w.docs.fits(doc) {
		return fmt.Errorf("segment: parent or document ids exceed %d bytes", uint32(math.MaxUint32))
	}
	parent := w.h.parents
	w.h.parents++
	w.parents.add(id)
	if !w.docs.lastIs(doc) {
		w.docs.add(doc)
	}
	w.docOf = append(w.docOf, uint32(w.docs.len()-1))
	w.first = append(w.first, w.h.children)
	w.ctxLen = append(w.ctxLen, uint32(context.Tokens))
	for i, k := range w.keys {
		w.parent[k] = append(w.parent[k], parentPosting{parent: parent, context: context.Counts[i], first: uint32(len(w.child[k]))})
	}
	return nil
}

// AddChild adds the next child, of the last parent added, with its id,
// its ordinal within its document and the analysis of its embedded text.
func (w *Writer) AddChild(id string, ordinal int, a embed.Analysis) error {
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
		w.holdInChild(k, parent)
		w.child[k] = append(w.child[k], childPosting{slot: slot, tf: a.Counts[i]})
	}
	return nil
}

// holdInChild gives parent a posting of term k, before a child of it
// holding the term is added, unless it has one.
func (w *Writer) holdInChild(k int, parent uint32) {
	list := w.parent[k]
	if n := len(list); n > 0 && list[n-1].parent == parent {
		return
	}
	w.parent[k] = append(list, parentPosting{parent: parent, first: uint32(len(w.child[k]))})
}

// resolve sets w.keys to the index of each term of a, refusing an
// analysis a segment cannot store: one given as ids, with counts that do
// not follow its terms, a repeated term, a zero count or a length beyond
// 32 bits. A refused analysis adds no posting (its terms may stay in the
// writer's table, which Bytes leaves out while they have none).
func (w *Writer) resolve(a embed.Analysis) error {
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
	t = strings.Clone(t)
	w.terms[t] = k
	w.names = append(w.names, t)
	w.child = append(w.child, nil)
	w.parent = append(w.parent, nil)
	w.seen = append(w.seen, 0)
	return k
}

// Bytes encodes the segment: the same parents, children and analyses,
// added in the same order, give the same bytes.
func (w *Writer) Bytes() ([]byte, error) {
	order := make([]int, 0, len(w.names))
	for k := range w.names {
		if len(w.parent[k]) > 0 { // a term of a refused analysis has none
			order = append(order, k)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(w.names[a], w.names[b]) })
	h := w.h
	h.terms = uint32(len(order))
	var termArena []byte
	var childPostings, parentPostings uint64
	for _, k := range order {
		termArena = append(termArena, w.names[k]...)
		childPostings += uint64(len(w.child[k]))
		parentPostings += uint64(len(w.parent[k]))
	}
	if max(uint64(len(termArena)), childWords*childPostings, parentWords*parentPostings) > math.MaxUint32 {
		return nil, fmt.Errorf("segment: more than %d words of postings or bytes of terms", uint32(math.MaxUint32))
	}
	h.termBytes, h.idBytes = uint32(len(termArena)), uint32(len(w.ids))
	h.docs, h.parentIDBytes, h.docIDBytes = uint32(w.docs.len()), uint32(len(w.parents.bytes)), uint32(len(w.docs.bytes))
	h.childPostings, h.parentPostings = uint32(childPostings), uint32(parentPostings)
	b := make([]byte, 0, headerSize+4*h.words()+trailerSize)
	b = h.appendTo(b)
	b = appendWords(b, w.childLen)
	b = appendWords(b, w.first)
	b = binary.LittleEndian.AppendUint32(b, h.children)
	b = appendWords(b, w.ctxLen)
	b = appendEnds(b, order, func(k int) int { return len(w.names[k]) })
	b = appendEnds(b, order, func(k int) int { return len(w.child[k]) })
	b = appendChildPostings(b, order, w.child)
	b = appendEnds(b, order, func(k int) int { return len(w.parent[k]) })
	b = appendParentPostings(b, order, w.parent)
	b = appendWords(b, w.idEnds)
	b = appendWords(b, w.ordinals)
	b = appendWords(b, w.docOf)
	b = appendWords(b, w.parents.ends)
	b = appendWords(b, w.docs.ends)
	b = appendArena(b, termArena)
	b = appendArena(b, w.ids)
	b = appendArena(b, w.parents.bytes)
	b = appendArena(b, w.docs.bytes)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
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

// appendChildPostings appends every child posting of lists, over order.
func appendChildPostings(b []byte, order []int, lists [][]childPosting) []byte {
	for _, k := range order {
		for _, p := range lists[k] {
			b = binary.LittleEndian.AppendUint32(b, p.slot)
			b = binary.LittleEndian.AppendUint32(b, p.tf)
		}
	}
	return b
}

// appendParentPostings appends every parent posting of lists, over order.
func appendParentPostings(b []byte, order []int, lists [][]parentPosting) []byte {
	for _, k := range order {
		for _, p := range lists[k] {
			b = binary.LittleEndian.AppendUint32(b, p.parent)
			b = binary.LittleEndian.AppendUint32(b, p.context)
			b = binary.LittleEndian.AppendUint32(b, p.first)
		}
	}
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

// len is the number of strings added.
func (a *idArena) len() int { return len(a.ends) }

// lastIs reports whether the last string added is id.
func (a *idArena) lastIs(id string) bool {
	return len(a.ends) > 0 && string(view(a.bytes, a.ends, len(a.ends)-1)) == id
}
