package segment

import "github.com/parentrag/parentrag/internal/retrieval/maxima"

// parentMaxima is a term's bound at every parent of a segment, one byte
// each (see package maxima): a parent the term's postings miss has 0.
// Adding a query term's bounds to every parent's sum then reads one byte
// per parent in order, eight parents per vector instruction, instead of
// scattering its postings' bounds.
type parentMaxima struct {
	codes []uint8
	unit  float32
}

// denseShare is the share of a segment's parents a term must be held by
// to keep its bounds per parent: at one in eight, its maxima take at most
// a quarter of the bytes its postings' bounds take.
const denseShare = 8

// denseMaxima returns, for each term of seg held by at least one parent
// in denseShare, its bounds per parent rounded up to maxima (nil for the
// others), from bounds, every parent posting's, and largest, each
// term's largest.
func denseMaxima(seg *Segment, bounds, largest []float32) []*parentMaxima {
	out := make([]*parentMaxima, seg.Terms())
	for k := range seg.Terms() {
		lo, _ := span(seg.parent.ends, k)
		pl := seg.parents(k)
		if pl.len()*denseShare < seg.Parents() {
			continue
		}
		d := &parentMaxima{codes: make([]uint8, seg.Parents()), unit: maxima.UnitFor(largest[k])}
		for j := range pl.len() {
			d.codes[pl.parent(j)] = maxima.CodeOf(bounds[int(lo)+j], d.unit)
		}
		out[k] = d
	}
	return out
}
