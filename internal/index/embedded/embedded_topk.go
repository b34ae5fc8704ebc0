package embedded

import (
	"bytes"
	"math"
	"slices"

	"github.com/parentrag/parentrag/internal/index/heaps"
)

// noSlot marks a removed slot in a compaction remap.
const noSlot = math.MaxUint32

// candidate is a scored slot.
type candidate struct {
	score float32
	slot  uint32
}

// topK keeps the k best live candidates seen so far in a bounded min-heap
// whose root is the worst kept candidate. "Better" means a higher score, or
// an equal score and a smaller id, which makes results deterministic.
type topK struct {
	k    int
	heap []candidate
	recs *recordTable
	keep func(slot uint32) bool // when set, the only slots offer accepts
}

func newTopK(k int, recs *recordTable) *topK {
	return &topK{k: k, heap: make([]candidate, 0, min(k, max(recs.live(), 1))), recs: recs}
}

// worse reports whether a ranks below b.
func (h *topK) worse(a, b candidate) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return bytes.Compare(h.recs.ids.bytes(a.slot), h.recs.ids.bytes(b.slot)) > 0
}

// floor is the lowest score offer can still accept: the k-th kept score
// once the heap is full, -Inf before.
func (h *topK) floor() float32 {
	if len(h.heap) < h.k {
		return float32(math.Inf(-1))
	}
	return h.heap[0].score
}

// offer considers a slot; tombstoned slots, slots keep refuses and NaN
// scores are ignored. The common rejection (a score below the current k-th)
// costs one comparison, and keep is asked only about a slot that would
// otherwise enter.
func (h *topK) offer(score float32, slot uint32) {
	if score != score {
		return
	}
	full := len(h.heap) == h.k
	if full && score < h.heap[0].score {
		return
	}
	if h.recs.isDead(slot) || (h.keep != nil && !h.keep(slot)) {
		return
	}
	c := candidate{score: score, slot: slot}
	if !full {
		h.heap = heaps.Push(h.heap, c, h.worse)
		return
	}
	if h.worse(h.heap[0], c) {
		heaps.ReplaceRoot(h.heap, c, h.worse)
	}
}

// sorted returns the kept candidates best first.
func (h *topK) sorted() []candidate {
	slices.SortFunc(h.heap, func(a, b candidate) int {
		switch {
		case h.worse(b, a):
			return -1
		case h.worse(a, b):
			return 1
		}
		return 0
	})
	return h.heap
}
