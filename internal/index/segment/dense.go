package segment

import (
	"math/bits"

	"github.com/parentrag/parentrag/internal/index/maxima"
)

// parentMaxima is a term's bound at every parent of a segment, one byte
// each (see package maxima): a parent the term's postings miss has 0.
// Adding a query term's bounds to every parent's sum then reads one byte
// per parent in order, eight parents per vector instruction, instead of
// scattering its postings' bounds.
type parentMaxima struct {
	codes []uint8
	unit  float32
	held  []heldWord // which parents the term's postings hold, 64 per word
}

// heldWord says which of 64 parents a term's postings hold, one bit each,
// and how many postings come before the first of them: a parent's
// posting is found with one read and a population count, not a search.
type heldWord struct {
	bits   uint64
	before uint32
}

// posting returns the index of parent's posting of the term, or false
// when the term has none there.
func (d *parentMaxima) posting(parent uint32) (int, bool) {
	w := d.held[parent/64]
	bit := uint64(1) << (parent % 64)
	if w.bits&bit == 0 {
		return 0, false
	}
	return int(w.before) + bits.OnesCount64(w.bits&(bit-1)), true
}

// denseShare is the share of a segment's parents a term must be held by
// to keep its bounds per parent: at one in eight, its maxima take at most
// a quarter of the bytes its postings' bounds take.
const denseShare = 8

// denseMaxima returns, for each term of seg held by at least one parent
// in denseShare, its bounds per parent rounded up to maxima and which
// parents it holds (nil for the others), from bounds, every parent posting's, and largest, each
// term's largest.
func denseMaxima(seg *Segment, bounds, largest []float32) []*parentMaxima {
	out := make([]*parentMaxima, seg.Terms())
	for k := range seg.Terms() {
		lo, _ := span(seg.parent.ends, k)
		pl := seg.parents(k)
		if pl.len()*denseShare < seg.Parents() {
			continue
		}
		d := &parentMaxima{codes: make([]uint8, seg.Parents()), unit: maxima.UnitFor(largest[k]), held: make([]heldWord, (seg.Parents()+63)/64)}
		for j := range pl.len() {
			p := pl.parent(j)
			d.codes[p] = maxima.CodeOf(bounds[int(lo)+j], d.unit)
			d.held[p/64].bits |= 1 << (p % 64)
		}
		before := uint32(0)
		for i := range d.held {
			d.held[i].before = before
			before += uint32(bits.OnesCount64(d.held[i].bits))
		}
		out[k] = d
	}
	return out
}
