package embedded

import (
	"context"
	"math"
	"math/bits"
	"sync"
)

// windowSize is how many consecutive slots pruned search gathers at once:
// the essential terms' postings in a window are scattered into per-slot
// scratch term at a time, which costs a few nanoseconds a posting, and only
// the slots they touch are then considered, in slot order.
const windowSize = 4096

// maxPrunedTerms is the most query terms pruned search handles: a slot's
// terms are one bit each of a uint64. Longer queries scan exhaustively.
const maxPrunedTerms = 64

// pruneWindow is the scratch of one window, clean (all zero, weights
// aside) between windows.
type pruneWindow struct {
	mask    [windowSize]uint64      // the terms each slot holds
	bound   [windowSize]float64     // bound on the slot's gathered contributions
	touched [windowSize / 64]uint64 // slots holding at least one term
	weights []float32               // term i's weight for offset o at i*windowSize+o
	batch   groupBatch              // grouped search's scratch
	order   []uint64                // the groups grouped search sweeps, by bound (sweepGroups)
	maxBits [groupChunk]uint32      // addPostingBounds' scratch
}

var windows = sync.Pool{New: func() any { return &pruneWindow{} }}

func getWindow(terms int) *pruneWindow {
	w := windows.Get().(*pruneWindow)
	if len(w.weights) < terms*windowSize {
		w.weights = make([]float32, terms*windowSize)
	}
	return w
}

func putWindow(w *pruneWindow) { windows.Put(w) }

// run scores candidates window by window until the essential cursors are
// exhausted. A window starts at the first slot an essential cursor is at;
// when the block maxima of all terms over it cannot lift any of its slots
// to the floor, the essential cursors jump past it unread. It looks at ctx once per checkEvery postings, between
// windows, and returns ctx's error once ctx is done, leaving the window
// scratch clean.
func (s *pruneSearch) run(ctx context.Context) error {
	budget := checkEvery
	for base := s.next(); base != noSlot; base = s.next() {
		before := s.visited
		end := uint32(min(uint64(base)+windowSize, noSlot))
		essential := s.ne
		if s.measure(base, end) {
			for _, i := range s.byBound[essential:] {
				s.gather(i, base, end)
			}
			essential = s.gatherDense(base, end, essential)
			s.decide(base, windowSize, essential)
		} else {
			s.skip(end)
		}
		for budget -= s.visited - before; budget <= 0; budget += checkEvery {
			if err := checkpoint(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// measure computes every term's bound over [base, end) and reports
// whether a slot there may still reach the floor.
func (s *pruneSearch) measure(base, end uint32) bool {
	for i := range s.cur {
		s.wbound[i], s.wblocks[i] = s.cur[i].windowBound(base, end)
	}
	for j, i := range s.byBound {
		s.wprefix[j+1] = s.wprefix[j] + s.wbound[i]
	}
	return !s.cannotReach(s.wprefix[len(s.byBound)])
}

// skip moves the essential cursors to end or beyond.
func (s *pruneSearch) skip(end uint32) {
	for _, i := range s.byBound[s.ne:] {
		if c := &s.cur[i]; c.slot() < end {
			_, _, looked := c.seek(end)
			s.visited += looked
		}
	}
}

// gather consumes cursor i's postings from base to below end, recording
// for each slot which terms it holds, their weights and a bound on their
// contributions.
func (s *pruneSearch) gather(i int, base, end uint32) {
	w := s.win
	c := &s.cur[i]
	s.visited += c.advance(base)
	bit := uint64(1) << i
	row := w.weights[i*windowSize : (i+1)*windowSize]
	p := c.postings[c.pos:]
	j := 0
	for ; j < len(p) && p[j].slot < end; j++ {
		off := p[j].slot - base
		w.touched[off/64] |= 1 << (off % 64)
		w.mask[off] |= bit
		row[off] = p[j].weight
		w.bound[off] += c.absQ * math.Abs(float64(p[j].weight))
	}
	c.pos += j
	s.visited += j
}

// probeCost is how many postings gathering costs as much as probing one
// candidate in one term does (a galloping search and its bookkeeping).
const probeCost = 4

// gatherDense also gathers non-essential terms, highest bound first, while
// a term has fewer postings in the window than probeCost times the
// candidates that would probe it: those are cheaper gathered than probed.
// It returns how many terms remain to probe, byBound[:n].
func (s *pruneSearch) gatherDense(base, end uint32, essential int) int {
	if essential == 0 {
		return 0
	}
	probes := probeCost * s.passing(essential)
	for ; essential > 0; essential-- {
		i := s.byBound[essential-1]
		if s.wblocks[i]*blockSize > probes {
			break
		}
		s.gather(i, base, end)
	}
	return essential
}

// passing counts the window's candidates whose gathered bound plus the
// window bounds of byBound[:essential] can still reach the floor.
func (s *pruneSearch) passing(essential int) int {
	w := s.win
	n := 0
	rest := s.wprefix[essential]
	for wi, word := range w.touched {
		for ; word != 0; word &= word - 1 {
			if !s.cannotReach(w.bound[wi*64+bits.TrailingZeros64(word)] + rest) {
				n++
			}
		}
	}
	return n
}

// decide considers every touched slot of the window's first span slots in
// slot order and cleans the scratch; byBound[:essential] were the terms
// not gathered.
func (s *pruneSearch) decide(base uint32, span, essential int) {
	w := s.win
	for wi, word := range w.touched[:(span+63)/64] {
		for ; word != 0; word &= word - 1 {
			off := wi*64 + bits.TrailingZeros64(word)
			mask, bound := w.mask[off], w.bound[off]
			w.mask[off], w.bound[off] = 0, 0
			if d := base + uint32(off); !s.h.recs.isDead(d) {
				s.candidate(d, off, mask, bound, essential)
			}
		}
		w.touched[wi] = 0
	}
}

// candidate decides slot d at window offset off, which holds the gathered
// terms of mask with contributions bounded by bound. The other terms,
// byBound[:essential], count with their window bounds; from the largest
// down, each is narrowed to its block bound and then probed, and d is
// dropped as soon as it cannot reach the floor. A d that survives is
// offered with its exact score.
func (s *pruneSearch) candidate(d uint32, off int, mask uint64, bound float64, essential int) {
	bound += s.wprefix[essential]
	if s.cannotReach(bound) {
		return
	}
	for j := essential - 1; j >= 0; j-- {
		i := s.byBound[j]
		c := &s.cur[i]
		bound -= s.wbound[i]
		if s.cannotReach(bound + c.blockBound(d)) {
			return
		}
		w, found, looked := c.seek(d)
		s.visited += looked
		if found {
			mask |= 1 << i
			s.win.weights[i*windowSize+off] = w
			bound += c.absQ * math.Abs(float64(w))
		}
	}
	s.offer(d, off, mask)
}

// offer sums d's products in increasing term order, the order the
// exhaustive scan and vector.Sparse.Dot use, and offers a positive result.
func (s *pruneSearch) offer(d uint32, off int, mask uint64) {
	var score float32
	for ; mask != 0; mask &= mask - 1 {
		i := bits.TrailingZeros64(mask)
		score += s.cur[i].weight * s.win.weights[i*windowSize+off]
	}
	if score > 0 && score >= s.floor {
		s.h.offer(score, d)
		if s.h.floor() != s.floor {
			s.raiseFloor()
		}
	}
}
