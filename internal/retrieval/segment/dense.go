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
// others), from every parent posting's bound and largest, each
// term's largest.
func denseMaxima(seg *Segment, postings []postingInfo, largest []float32) []*parentMaxima {
	out := make([]*parentMaxima, seg.Terms())
	for k := range seg.Terms() {
		lo, hi := span(seg.parent.ends, k)
		if int(hi-lo)*denseShare < seg.Parents() {
			continue
		}
		d := &parentMaxima{codes: make([]uint8, seg.Parents()), unit: maxima.UnitFor(largest[k])}
		for j, p := range seg.parent.parent[lo:hi] {
			d.codes[p] = maxima.CodeOf(postings[lo+uint32(j)].bound, d.unit)
		}
		out[k] = d
	}
	return out
}
