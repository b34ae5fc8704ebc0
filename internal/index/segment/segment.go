package segment

import (
	"sort"
)

// Children returns the number of children in the segment.
func (s *Segment) Children() int { return int(s.h.children) }

// Parents returns the number of parents in the segment.
func (s *Segment) Parents() int { return int(s.h.parents) }

// Tokens returns the children's lengths summed.
func (s *Segment) Tokens() uint64 { return s.h.tokens }

// Contexts reports whether the segment's parents carry contexts.
func (s *Segment) Contexts() bool { return s.h.flags&flagContexts != 0 }

// Terms returns the number of distinct terms of the segment's children
// and contexts.
func (s *Segment) Terms() int { return int(s.h.terms) }

// Term returns the k-th term, in byte order.
func (s *Segment) Term(k int) string { return string(s.termBytes(k)) }

// DocFreq returns how many of the segment's children hold the k-th term.
func (s *Segment) DocFreq(k int) uint32 {
	return uint32(s.children(k).len())
}

// Lookup returns the index of term t, or false when no child or context
// of the segment holds it.
func (s *Segment) Lookup(t string) (int, bool) {
	k := sort.Search(len(s.termEnds), func(k int) bool { return string(s.termBytes(k)) >= t })
	if k < len(s.termEnds) && string(s.termBytes(k)) == t {
		return k, true
	}
	return 0, false
}

// ID returns the id of the child in the given slot.
func (s *Segment) ID(slot uint32) string { return string(s.idBytes(slot)) }

// ParentOf returns the parent of the child in the given slot.
func (s *Segment) ParentOf(slot uint32) int {
	return sort.Search(int(s.h.parents), func(p int) bool { return s.parentFirst[p+1] > slot })
}

// ParentID returns the id of parent p.
func (s *Segment) ParentID(p int) string { return string(view(s.parentIDs, s.parentIDEnds, p)) }

// DocID returns the id of parent p's document.
func (s *Segment) DocID(p int) string { return string(view(s.docIDs, s.docEnds, int(s.parentDocs[p]))) }

// Ordinal returns the ordinal, within its document, of the child in the
// given slot.
func (s *Segment) Ordinal(slot uint32) int { return int(s.ordinals[slot]) }

// termBytes returns the k-th term as a view of the arena.
func (s *Segment) termBytes(k int) []byte {
	return view(s.terms, s.termEnds, k)
}

// idBytes returns the id of the child in slot as a view of the arena.
func (s *Segment) idBytes(slot uint32) []byte {
	return view(s.ids, s.idEnds, int(slot))
}

// view returns the i-th string of an arena whose strings end at ends.
func view(arena []byte, ends []uint32, i int) []byte {
	lo := uint32(0)
	if i > 0 {
		lo = ends[i-1]
	}
	return arena[lo:ends[i]]
}
