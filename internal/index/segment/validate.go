package segment

import "bytes"

// validate checks every cross-reference of an opened segment.
func (s *Segment) validate() error {
	h := &s.h
	if err := checkEnds(s.idEnds, h.idBytes, "child id"); err != nil {
		return err
	}
	if err := checkEnds(s.parentIDEnds, h.parentIDBytes, "parent id"); err != nil {
		return err
	}
	if err := checkEnds(s.docEnds, h.docIDBytes, "document id"); err != nil {
		return err
	}
	for p, d := range s.parentDocs {
		if d >= h.docs {
			return corrupt("parent %d is of document %d of %d", p, d, h.docs)
		}
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

// checkTerm checks term k's postings: at least one parent posting,
// children in strictly increasing slots with non-zero frequencies,
// parents in strictly increasing order, each parent posting with a
// context frequency (only where the segment has contexts) or children,
// and its children's postings, from its first to the next posting's,
// children of that parent; the first posting's start at the term's
// first child posting, so every child posting is some parent's.
func (s *Segment) checkTerm(k int) error {
	cl, pl := s.children(k), s.parents(k)
	if pl.len() == 0 {
		return corrupt("term %d has no parent posting", k)
	}
	if pl.first(0) != 0 {
		return corrupt("the children of term %d's first parent posting begin at %d, not 0", k, pl.first(0))
	}
	for i := range cl.len() {
		if slot := cl.slot(i); slot >= s.h.children || (i > 0 && slot <= cl.slot(i-1)) {
			return corrupt("child posting %d of term %d is at %d, out of order or beyond %d", i, k, slot, s.h.children)
		}
		if cl.tf(i) == 0 {
			return corrupt("child posting %d of term %d has a zero frequency", i, k)
		}
	}
	for j := range pl.len() {
		if err := s.checkParentPosting(k, pl, j, cl); err != nil {
			return err
		}
	}
	return nil
}

// checkParentPosting checks the j-th of term k's parent postings pl
// against the term's child postings cl.
func (s *Segment) checkParentPosting(k int, pl parentList, j int, cl childList) error {
	p := pl.parent(j)
	if p >= s.h.parents || (j > 0 && p <= pl.parent(j-1)) {
		return corrupt("parent posting %d of term %d is at %d, out of order or beyond %d", j, k, p, s.h.parents)
	}
	if j+1 < pl.len() && pl.first(j+1) < pl.first(j) || int(pl.first(j)) > cl.len() {
		return corrupt("the children of parent posting %d of term %d begin at %d, out of order or beyond %d", j, k, pl.first(j), cl.len())
	}
	lo, hi := pl.childSpan(j, cl.len())
	if pl.context(j) == 0 && lo == hi {
		return corrupt("parent posting %d of term %d has neither a context frequency nor children", j, k)
	}
	if pl.context(j) > 0 && s.h.flags&flagContexts == 0 {
		return corrupt("parent posting %d of term %d has a context frequency in a segment without contexts", j, k)
	}
	for i := lo; i < hi; i++ {
		if slot := cl.slot(i); slot < s.parentFirst[p] || slot >= s.parentFirst[p+1] {
			return corrupt("child %d holds term %d under parent posting %d, but is not a child of parent %d", slot, k, j, p)
		}
	}
	return nil
}
