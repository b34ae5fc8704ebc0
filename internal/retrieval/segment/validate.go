package segment

import (
	"bytes"
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
	if err := checkPostings(&s.child, h.children, "child"); err != nil {
		return err
	}
	if h.flags&flagContexts == 0 && h.contextPostings > 0 {
		return corrupt("%d context postings in a segment without contexts", h.contextPostings)
	}
	return checkPostings(&s.context, h.parents, "context")
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
// decrease and end at the number of children, and that a segment without
// contexts has no context lengths.
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

// checkPostings checks that every term's postings are in strictly
// increasing positions below limit, with non-zero frequencies.
func checkPostings(p *postingLists, limit uint32, what string) error {
	if err := checkEnds(p.ends, uint32(len(p.at)), what+" posting"); err != nil {
		return err
	}
	for k := range p.ends {
		at, tf := p.list(k)
		for i, a := range at {
			if a >= limit || (i > 0 && a <= at[i-1]) {
				return corrupt("%s posting %d of term %d is at %d, out of order or beyond %d", what, i, k, a, limit)
			}
			if tf[i] == 0 {
				return corrupt("%s posting %d of term %d has a zero frequency", what, i, k)
			}
		}
	}
	return nil
}
