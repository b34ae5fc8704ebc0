package segment

import (
	"bytes"
	"math"
)

// validate checks every cross-reference of an opened segment.
func (s *Segment) validate() error {
	h := &s.h
	if err := checkEnds(s.idEnds, h.idBytes, "child id"); err != nil {
		return err
	}
	if err := checkEnds(s.termEnds, h.termBytes, "term"); err != nil {
		return err
	}
	if err := s.checkTerms(); err != nil {
		return err
	}
	if err := s.checkParents(); err != nil {
		return err
	}
	if err := checkEnds(s.child.ends, h.childPostings, "child posting"); err != nil {
		return err
	}
	if err := checkEnds(s.parent.ends, h.parentPostings, "parent posting"); err != nil {
		return err
	}
	if err := checkEnds(s.blockEnds, h.blocks, "block"); err != nil {
		return err
	}
	for k := range s.termEnds {
		if err := s.checkTerm(k); err != nil {
			return err
		}
	}
	return nil
}

// checkEnds checks that ends never decrease and that the last is total.
func checkEnds(ends []uint32, total uint32, what string) error {
	prev := uint32(0)
	for i, e := range ends {
		if e < prev {
			return corrupt("%s %d ends at %d, before the previous one", what, i, e)
		}
		prev = e
	}
	if prev != total {
		return corrupt("%ss end at %d of %d bytes", what, prev, total)
	}
	return nil
}

// checkTerms checks that the terms are non-empty and strictly increasing.
func (s *Segment) checkTerms() error {
	var prev []byte
	for k := range s.termEnds {
		t := s.termBytes(k)
		if len(t) == 0 || (k > 0 && bytes.Compare(prev, t) >= 0) {
			return corrupt("term %d is empty or out of order", k)
		}
		prev = t
	}
	return nil
}

// checkParents checks that the parents' first children start at 0, never
// decrease and end at the number of children, that a segment without
// contexts has no context lengths, and that the total length is the
// children's.
func (s *Segment) checkParents() error {
	f := s.parentFirst
	if f[0] != 0 || f[len(f)-1] != s.h.children {
		return corrupt("parents' children run from %d to %d of %d", f[0], f[len(f)-1], s.h.children)
	}
	for p := 1; p < len(f); p++ {
		if f[p] < f[p-1] {
			return corrupt("parent %d starts at child %d, before parent %d (at %d)", p, f[p], p-1, f[p-1])
		}
	}
	if s.h.flags&flagContexts == 0 {
		for p, n := range s.parentTokens {
			if n != 0 {
				return corrupt("parent %d has a context of %d tokens in a segment without contexts", p, n)
			}
		}
	}
	total := uint64(0)
	for _, n := range s.childTokens {
		total += uint64(n)
	}
	if total != s.h.tokens {
		return corrupt("children's lengths sum to %d, not %d", total, s.h.tokens)
	}
	return nil
}

// checkTerm checks term k's postings: children in strictly increasing
// slots, parents in strictly increasing order, every frequency that
// should be set set, each parent posting's child frequency the largest of
// its children's and its child length the shortest of theirs, and its
// blocks the bounds of its parent postings.
func (s *Segment) checkTerm(k int) error {
	slots, tfs := s.child.list(k)
	tp := s.parents(k)
	if err := checkOrder(slots, s.h.children, "child", k); err != nil {
		return err
	}
	if err := checkOrder(tp.parent, s.h.parents, "parent", k); err != nil {
		return err
	}
	largest := make([]uint32, len(tp.parent))  // the children's largest frequency, per parent posting
	shortest := make([]uint32, len(tp.parent)) // the shortest child holding it, per parent posting
	for i := range shortest {
		shortest[i] = math.MaxUint32
	}
	next := 0
	for i, slot := range slots {
		if tfs[i] == 0 {
			return corrupt("child posting %d of term %d has a zero frequency", i, k)
		}
		for next < len(tp.parent) && s.parentFirst[tp.parent[next]+1] <= slot {
			next++
		}
		if next == len(tp.parent) || s.parentFirst[tp.parent[next]] > slot {
			return corrupt("child %d holds term %d but its parent has no posting of it", slot, k)
		}
		largest[next] = max(largest[next], tfs[i])
		shortest[next] = min(shortest[next], s.childTokens[slot])
	}
	for i := range tp.parent {
		if tp.child[i] != largest[i] {
			return corrupt("parent posting %d of term %d says its children hold it %d times at most, not %d", i, k, tp.child[i], largest[i])
		}
		want := shortest[i]
		if want == math.MaxUint32 {
			want = 0 // no child holds it
		}
		if tp.childLen[i] != want {
			return corrupt("parent posting %d of term %d says its shortest child holding it is %d tokens long, not %d", i, k, tp.childLen[i], want)
		}
		if tp.child[i] == 0 && tp.context[i] == 0 {
			return corrupt("parent posting %d of term %d has neither a context nor a child frequency", i, k)
		}
		if tp.context[i] > 0 && s.h.flags&flagContexts == 0 {
			return corrupt("parent posting %d of term %d has a context frequency in a segment without contexts", i, k)
		}
	}
	return s.checkBlocks(k, tp)
}

// checkOrder checks that positions are strictly increasing and below
// limit.
func checkOrder(at []uint32, limit uint32, what string, k int) error {
	for i, a := range at {
		if a >= limit || (i > 0 && a <= at[i-1]) {
			return corrupt("%s posting %d of term %d is at %d, out of order or beyond %d", what, i, k, a, limit)
		}
	}
	return nil
}

// checkBlocks checks that term k's blocks are the bounds its parent
// postings make.
func (s *Segment) checkBlocks(k int, tp termParents) error {
	if len(tp.blocks) != blockWords*blockCount(len(tp.parent)) {
		return corrupt("term %d has %d block words for %d parent postings", k, len(tp.blocks), len(tp.parent))
	}
	list := make([]parentPosting, 0, blockSize)
	for b := 0; b*blockSize < len(tp.parent); b++ {
		list = list[:0]
		for i := b * blockSize; i < min(len(tp.parent), (b+1)*blockSize); i++ {
			list = append(list, parentPosting{parent: tp.parent[i], context: tp.context[i], child: tp.child[i], childLen: tp.childLen[i]})
		}
		want := newBlock(list, s.parentTokens)
		if [blockWords]uint32(tp.blocks[blockWords*b:]) != want {
			return corrupt("block %d of term %d does not bound its postings", b, k)
		}
	}
	return nil
}
