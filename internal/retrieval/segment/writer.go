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
	child    [][]posting // by term: the children holding it
	context  [][]posting // by term: the parents whose context holds it
	h        header
	first    []uint32 // parentFirst without its end
	childLen []uint32
	ctxLen   []uint32
	idEnds   []uint32
	ids      []byte
}

// posting is one text holding a term: a child's slot or a parent's index,
// and the term's frequency there.
type posting struct{ at, tf uint32 }

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

// AddParent starts the next parent, whose context is the analysis given
// (ignored by a writer without contexts). The children added after it,
// until the next AddParent, are its own.
func (w *Writer) AddParent(context embed.Analysis) error {
	if w.h.parents == math.MaxUint32-1 {
		return fmt.Errorf("segment: more than %d parents", math.MaxUint32-1)
	}
	parent := w.h.parents
	w.first = append(w.first, w.h.children)
	w.h.parents++
	if !w.contexts {
		w.ctxLen = append(w.ctxLen, 0)
		return nil
	}
	if err := checkAnalysis(context); err != nil {
		return fmt.Errorf("segment: context of parent %d: %w", parent, err)
	}
	w.ctxLen = append(w.ctxLen, uint32(context.Tokens))
	for i, t := range context.Terms {
		k := w.term(t)
		w.context[k] = append(w.context[k], posting{at: parent, tf: context.Counts[i]})
	}
	return nil
}

// AddChild adds the next child, of the last parent added, with its id
// and the analysis of its embedded text.
func (w *Writer) AddChild(id string, a embed.Analysis) error {
	if w.h.parents == 0 {
		return ErrNoParent
	}
	if w.h.children == math.MaxUint32 {
		return fmt.Errorf("segment: more than %d children", uint32(math.MaxUint32))
	}
	if err := checkAnalysis(a); err != nil {
		return fmt.Errorf("segment: child %q: %w", id, err)
	}
	if uint64(len(w.ids))+uint64(len(id)) > math.MaxUint32 {
		return fmt.Errorf("segment: child ids exceed %d bytes", uint32(math.MaxUint32))
	}
	slot := w.h.children
	w.h.children++
	w.h.tokens += uint64(a.Tokens)
	w.childLen = append(w.childLen, uint32(a.Tokens))
	w.ids = append(w.ids, id...)
	w.idEnds = append(w.idEnds, uint32(len(w.ids)))
	for i, t := range a.Terms {
		k := w.term(t)
		w.child[k] = append(w.child[k], posting{at: slot, tf: a.Counts[i]})
	}
	return nil
}

// checkAnalysis refuses an analysis a segment cannot store: one given as
// ids, with counts that do not follow its terms, a repeated term, a zero
// count or a length beyond 32 bits.
func checkAnalysis(a embed.Analysis) error {
	switch {
	case a.Terms == nil && len(a.IDs) > 0:
		return errors.New("analysis given as term ids; a segment stores terms")
	case len(a.Counts) != len(a.Terms):
		return fmt.Errorf("%d counts for %d terms", len(a.Counts), len(a.Terms))
	case a.Tokens < 0 || uint64(a.Tokens) > math.MaxUint32:
		return fmt.Errorf("length %d tokens is out of range", a.Tokens)
	}
	seen := make(map[string]struct{}, len(a.Terms))
	for i, t := range a.Terms {
		if a.Counts[i] == 0 {
			return fmt.Errorf("term %q has a zero count", t)
		}
		if _, dup := seen[t]; dup {
			return fmt.Errorf("term %q repeats", t)
		}
		seen[t] = struct{}{}
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
	w.context = append(w.context, nil)
	return k
}

// Bytes encodes the segment: the same parents, children and analyses,
// added in the same order, give the same bytes.
func (w *Writer) Bytes() ([]byte, error) {
	order := make([]int, len(w.names))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(w.names[a], w.names[b]) })
	h := w.h
	h.terms = uint32(len(order))
	var termArena []byte
	var childPostings, contextPostings uint64
	for _, k := range order {
		termArena = append(termArena, w.names[k]...)
		childPostings += uint64(len(w.child[k]))
		contextPostings += uint64(len(w.context[k]))
	}
	if max(uint64(len(termArena)), childPostings, contextPostings) > math.MaxUint32 {
		return nil, fmt.Errorf("segment: more than %d postings or bytes of terms", uint32(math.MaxUint32))
	}
	h.termBytes, h.idBytes = uint32(len(termArena)), uint32(len(w.ids))
	h.childPostings, h.contextPostings = uint32(childPostings), uint32(contextPostings)
	b := make([]byte, 0, headerSize+4*h.words()+trailerSize)
	b = h.appendTo(b)
	b = appendWords(b, w.childLen)
	b = appendWords(b, w.first)
	b = binary.LittleEndian.AppendUint32(b, h.children)
	b = appendWords(b, w.ctxLen)
	b = appendEnds(b, order, func(k int) int { return len(w.names[k]) })
	b = appendPostings(b, order, w.child)
	b = appendPostings(b, order, w.context)
	b = appendWords(b, w.idEnds)
	b = appendArena(b, termArena)
	b = appendArena(b, w.ids)
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

// appendPostings appends the ends of lists over order, then their
// positions, then their frequencies.
func appendPostings(b []byte, order []int, lists [][]posting) []byte {
	b = appendEnds(b, order, func(k int) int { return len(lists[k]) })
	for _, k := range order {
		for _, p := range lists[k] {
			b = binary.LittleEndian.AppendUint32(b, p.at)
		}
	}
	for _, k := range order {
		for _, p := range lists[k] {
			b = binary.LittleEndian.AppendUint32(b, p.tf)
		}
	}
	return b
}
