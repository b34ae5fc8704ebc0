package segment

import (
	"container/heap"
	"context"
)

// seedParents is how many parents of largest bound runBounded scores
// first, to raise the k-th score before it looks at the others.
const seedParents = 32

// walkChoice is how Search walks a segment: as the query's terms make
// cheapest, or always one way (which tests compare).
type walkChoice uint8

const (
	walkCheapest walkChoice = iota
	walkByParent
	walkByBound
)

// frequent reports whether the query's terms hold so many of the
// segment's parents that adding up every parent's bound, term by term,
// costs less than walking them parent by parent.
func (m *maxScore) frequent() bool {
	if m.walk != walkCheapest {
		return m.walk == walkByBound
	}
	postings := 0
	for _, t := range m.byID {
		postings += len(t.tp.parent)
	}
	return postings > m.seg.Parents()/2
}

// runBounded offers best every child of the segment that could enter it,
// as run does, another way: it adds up every parent's bound over the
// query's terms, scores the seedParents parents of largest bound first,
// then, in order, every other parent whose bound, widened as run widens
// it, reaches the k-th score. m.acc must hold a zero per parent; it is
// left so.
func (m *maxScore) runBounded(ctx context.Context, best *topK) error {
	acc := m.acc
	defer clear(acc)
	for _, t := range m.byID {
		for j, p := range t.tp.parent {
			acc[p] += t.qw * t.bounds[j]
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, p := range largestBounds(acc, seedParents) {
		if float64(acc[p])*m.slack >= float64(best.floor()) {
			m.rewind()
			m.scoreParent(p, best)
		}
		acc[p] = 0 // scored, or never to be
	}
	m.rewind()
	floor := float64(best.floor())
	for p, bound := range acc {
		if p%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if bound > 0 && float64(bound)*m.slack >= floor {
			m.scoreParent(uint32(p), best)
			floor = float64(best.floor())
		}
	}
	return nil
}

// rewind moves every cursor back to its first posting.
func (m *maxScore) rewind() {
	for _, t := range m.byID {
		t.next, t.nextCh = 0, 0
	}
}

// largestBounds returns the indices of the n largest positive values of
// acc, largest first, ties to the smaller index.
func largestBounds(acc []float32, n int) []uint32 {
	h := boundHeap{acc: acc}
	for p, v := range acc {
		if v <= 0 {
			continue
		}
		if len(h.at) < n {
			heap.Push(&h, uint32(p))
		} else if v > acc[h.at[0]] {
			h.at[0] = uint32(p)
			heap.Fix(&h, 0)
		}
	}
	out := make([]uint32, len(h.at))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(uint32)
	}
	return out
}

// boundHeap is a heap of parents, the smallest bound at its root.
type boundHeap struct {
	acc []float32
	at  []uint32
}

func (h boundHeap) Len() int { return len(h.at) }
func (h boundHeap) Less(i, j int) bool {
	a, b := h.acc[h.at[i]], h.acc[h.at[j]]
	return a < b || (a == b && h.at[i] > h.at[j])
}
func (h boundHeap) Swap(i, j int) { h.at[i], h.at[j] = h.at[j], h.at[i] }
func (h *boundHeap) Push(x any)   { h.at = append(h.at, x.(uint32)) }
func (h *boundHeap) Pop() any {
	x := h.at[len(h.at)-1]
	h.at = h.at[:len(h.at)-1]
	return x
}
