package segment

import (
	"bytes"
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

// push adds c to the heap.
func (h *worstFirst) push(c candidate) {
	*h = append(*h, c)
	l := *h
	for i := len(l) - 1; i > 0; {
		up := (i - 1) / 2
		if !better(l[up], l[i]) {
			break
		}
		l[up], l[i] = l[i], l[up]
		i = up
	}
}

// replaceWorst puts c in place of the root and restores the heap.
func (h worstFirst) replaceWorst(c candidate) {
	h[0] = c
	for i := 0; ; {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && better(h[worst], h[l]) {
			worst = l
		}
		if r < len(h) && better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
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
		t.heap.push(c)
		return
	}
	if better(c, t.heap[0]) {
		t.heap.replaceWorst(c)
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
