package segment

import (
	"bytes"
	"container/heap"
	"math"
	"slices"
)

// candidate is a scored child of a set.
type candidate struct {
	score float32
	seg   int
	slot  uint32
	id    []byte
}

// better reports whether a ranks above b: a higher score, or an equal
// one and a smaller id.
func better(a, b candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return bytes.Compare(a.id, b.id) < 0
}

// topK keeps the k best candidates offered in a bounded heap whose root
// is the worst kept.
type topK struct {
	k    int
	heap worstFirst
}

// worstFirst is a heap of candidates, the worst at its root.
type worstFirst []candidate

func (h worstFirst) Len() int           { return len(h) }
func (h worstFirst) Less(i, j int) bool { return better(h[j], h[i]) }
func (h worstFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worstFirst) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *worstFirst) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// floor is the lowest score offer can still accept: the k-th kept score
// once k are kept, -Inf before.
func (t *topK) floor() float32 {
	if len(t.heap) < t.k {
		return float32(math.Inf(-1))
	}
	return t.heap[0].score
}

// offer considers c, keeping it when it ranks above the worst kept or
// fewer than k are kept.
func (t *topK) offer(c candidate) {
	if len(t.heap) < t.k {
		heap.Push(&t.heap, c)
		return
	}
	if better(c, t.heap[0]) {
		t.heap[0] = c
		heap.Fix(&t.heap, 0)
	}
}

// hits returns the kept candidates, best first.
func (t *topK) hits() []Hit {
	list := slices.Clone(t.heap)
	slices.SortFunc(list, func(a, b candidate) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	out := make([]Hit, len(list))
	for i, c := range list {
		out[i] = Hit{ID: string(c.id), Segment: c.seg, Slot: c.slot, Score: c.score}
	}
	return out
}
