package segment

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"

	"github.com/parentrag/parentrag/internal/index/heaps"
	"github.com/parentrag/parentrag/internal/index/maxima"
)

// seedParents is how many parents of largest bound, over every segment,
// Search scores first, to raise the k-th score close to its final value
// before any segment is swept.
const seedParents = 160

// boundPool holds the per-parent bounds of searches, reused.
var boundPool = sync.Pool{New: func() any { return new([]float32) }}

// seedBest adds up, in each of searches' segments, every parent's
// bound over the query's terms into the segment's acc, then scores the
// seeds parents of largest bound among them all, sweepBatch at a time in
// decreasing order of bound (so that the floor rises soonest and the
// later seeds are passed over most), and zeroes their bounds: best's
// floor is then near its final value, and sweep passes over them. Every
// cursor is left at its start. The returned function gives the bounds
// back to the pool; call it once the searches are done, whatever the
// error.
func seedBest(ctx context.Context, searches []*search, seeds int, best *topK) (release func(), err error) {
	parents := 0
	for _, m := range searches {
		parents += m.seg.Parents()
	}
	buf := boundPool.Get().(*[]float32)
	*buf = slices.Grow((*buf)[:0], parents)[:parents]
	clear(*buf)
	release = func() { boundPool.Put(buf) }
	at := 0
	for _, m := range searches {
		m.acc = (*buf)[at : at+m.seg.Parents() : at+m.seg.Parents()]
		at += m.seg.Parents()
		m.addBounds()
		if err := ctx.Err(); err != nil {
			return release, err
		}
	}
	first := largestBounds(searches, seeds)
	slices.SortFunc(first, func(a, b seed) int { return cmp.Compare(b.bound, a.bound) })
	for _, sd := range first {
		searches[sd.search].acc[sd.parent] = 0 // scored, or never to be
	}
	for from := 0; from < len(first); from += sweepBatch {
		scoreSeeds(searches, first[from:min(from+sweepBatch, len(first))], best)
	}
	for _, m := range searches {
		m.rewind()
	}
	return release, nil
}

// scoreSeeds scores, in segment and parent order, those of seeds whose
// bound, widened, still reaches best's floor, each segment's from its
// cursors' start.
func scoreSeeds(searches []*search, seeds []seed, best *topK) {
	slices.SortFunc(seeds, func(a, b seed) int {
		return cmp.Or(cmp.Compare(a.search, b.search), cmp.Compare(a.parent, b.parent))
	})
	for i, sd := range seeds {
		m := searches[sd.search]
		if float64(sd.bound)*m.slack >= float64(best.floor()) {
			m.batch = append(m.batch, sd.parent)
		}
		if i+1 == len(seeds) || seeds[i+1].search != sd.search {
			m.rewind()
			m.scoreParents(m.batch, best)
			m.batch = m.batch[:0]
		}
	}
}

// addBounds adds every query term's bound at each of its parent postings
// to that parent's entry of m.acc.
func (m *search) addBounds() {
	acc := m.acc
	for _, t := range m.terms {
		if t.dense != nil {
			maxima.AddScaled(acc, t.dense.codes, t.dense.unit, t.qw)
			continue
		}
		for j := range t.pl.len() {
			acc[t.pl.parent(j)] += t.qw * t.bounds[j]
		}
	}
}

// sweep offers best, in parent order, the children of every parent of
// the segment whose bound in m.acc, widened by m.slack, reaches
// the k-th score; seedBest must have filled m.acc.
func (m *search) sweep(ctx context.Context, best *topK) error {
	least := m.leastReaching(best.floor())
	for p0 := 0; p0 < len(m.acc); p0 += 4096 {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := m.acc[p0:min(p0+4096, len(m.acc))]
		for i := maxima.FirstAtLeast(chunk, 0, least); i < len(chunk); i = maxima.FirstAtLeast(chunk, i+1, least) {
			if float64(chunk[i])*m.slack < float64(best.floor()) {
				continue
			}
			if m.batch = append(m.batch, uint32(p0+i)); len(m.batch) == sweepBatch {
				m.scoreParents(m.batch, best)
				m.batch, least = m.batch[:0], m.leastReaching(best.floor())
			}
		}
	}
	m.scoreParents(m.batch, best)
	m.batch = m.batch[:0]
	return nil
}

// sweepBatch is how many parents sweep finds before scoring them together,
// so that their postings' cache misses overlap; the k-th score they are
// found against is the one before the batch.
const sweepBatch = 8

// leastReaching returns a positive float32 no larger than any bound
// that, widened by m.slack, reaches floor: a bound below it cannot (nor
// can a bound of zero, since a hit's score is positive).
func (m *search) leastReaching(floor float32) float32 {
	if math.IsInf(float64(floor), -1) {
		return math.SmallestNonzeroFloat32
	}
	least := float32(float64(floor) / m.slack)
	return max(math.Nextafter32(least, float32(math.Inf(-1))), math.SmallestNonzeroFloat32)
}

// rewind moves every cursor back to its first posting.
func (m *search) rewind() {
	for _, t := range m.terms {
		t.next = 0
	}
}

// seed is a parent of one of seedBest's searches, with its bound.
type seed struct {
	bound  float32
	search int
	parent uint32
}

// largestBounds returns the n parents of largest positive bound over
// every search's acc, in no particular order.
func largestBounds(searches []*search, n int) []seed {
	h := make([]seed, 0, n)
	if n == 0 {
		return h
	}
	least := float32(math.SmallestNonzeroFloat32) // what the next seed must reach
	for i, m := range searches {
		acc := m.acc
		for p := maxima.FirstAtLeast(acc, 0, least); p < len(acc); p = maxima.FirstAtLeast(acc, p+1, least) {
			if sd := (seed{bound: acc[p], search: i, parent: uint32(p)}); len(h) < n {
				h = heaps.Push(h, sd, smallerBound)
			} else {
				heaps.ReplaceRoot(h, sd, smallerBound)
			}
			if len(h) == n {
				least = math.Nextafter32(h[0].bound, float32(math.Inf(1)))
			}
		}
	}
	return h
}

// smallerBound orders the heap of seeds largestBounds keeps: the smallest
// bound at its root.
func smallerBound(a, b seed) bool { return a.bound < b.bound }
