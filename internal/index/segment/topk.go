package segment

import (
	"bytes"
	"math"
	"slices"

	"github.com/parentrag/parentrag/internal/index/heaps"
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
// is the worst kept; with keep, only those keep accepts.
type topK struct {
	k    int
	heap []candidate // a heap by worseFirst
	// keep, when not nil, accepts or refuses a candidate that would
	// otherwise be kept; it sees the candidate without its score.
	keep func(Hit) bool
}

// worseFirst orders the heap of topK: the worst candidate at its root.
func worseFirst(a, b candidate) bool { return better(b, a) }

// floor is the lowest score offer can still accept: the k-th kept score
// once k are kept, -Inf before.
func (t *topK) floor() float32 {
	if len(t.heap) < t.k {
		return float32(math.Inf(-1))
	}
	return t.heap[0].score
}

// offer considers c, keeping it when it ranks above the worst kept or
// fewer than k are kept, and keep accepts it.
func (t *topK) offer(c candidate) {
	if len(t.heap) < t.k {
		if t.accepts(c) {
			t.heap = heaps.Push(t.heap, c, worseFirst)
		}
		return
	}
	if better(c, t.heap[0]) && t.accepts(c) {
		heaps.ReplaceRoot(t.heap, c, worseFirst)
	}
}

// accepts reports whether keep, if any, accepts c. The floor rises only
// with candidates kept, so a refused one never prunes another: the search
// stays exact among those keep accepts.
func (t *topK) accepts(c candidate) bool {
	return t.keep == nil || t.keep(Hit{ID: string(c.id), Segment: c.seg, Slot: c.slot})
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
