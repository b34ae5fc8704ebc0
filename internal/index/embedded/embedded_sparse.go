package embedded

import (
	"context"
	"runtime"
	"slices"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// posting is one sparse entry: a record slot and its weight for the term.
type posting struct {
	slot   uint32
	weight float32
}

// invertedIndex maps each sparse term id to its postings, kept in ascending
// slot order (slots are appended in order and compaction preserves it).
// Postings of tombstoned slots stay until compaction; search skips them.
// blockMax[li][b] is the largest weight magnitude among postings
// b*blockSize.. of lists[li], kept current by every write; pruned search
// bounds scores with it. groups[li], for the dense lists only (the zero
// value otherwise), bounds lists[li]'s weight magnitudes per group of
// slots and indexes its postings by slot (see embedded_prune_groups.go).
// tops[li] is the largest weight magnitude of lists[li] (the largest of
// its block maxima), so that a query needs not look for it.
type invertedIndex struct {
	terms    map[uint32]uint32 // term id -> position in lists and keys
	keys     []uint32          // term id of each list
	lists    [][]posting
	blockMax [][]float32
	groups   []groupIndex
	tops     []float32
	total    int // postings held, tombstoned ones included
}

func newInvertedIndex() invertedIndex {
	return invertedIndex{terms: make(map[uint32]uint32)}
}

// add indexes the non-zero weights of s for slot. Zero weights contribute
// nothing to an inner product, so dropping them keeps search exact.
func (x *invertedIndex) add(slot uint32, s *vector.Sparse) {
	for i, t := range s.Indices {
		w := s.Values[i]
		if w == 0 {
			continue
		}
		li, ok := x.terms[t]
		if !ok {
			li = uint32(len(x.lists))
			x.terms[t] = li
			x.keys = append(x.keys, t)
			x.lists = append(x.lists, nil)
			x.blockMax = append(x.blockMax, nil)
			x.groups = append(x.groups, groupIndex{})
			x.tops = append(x.tops, 0)
		}
		x.lists[li] = append(x.lists[li], posting{slot: slot, weight: w})
		x.blockMax[li] = appendBlockMax(x.blockMax[li], len(x.lists[li]), w)
		x.followGroups(li)
		x.tops[li] = max(x.tops[li], absWeight(w))
		x.total++
	}
}

// accumulator is per-search scratch: a score per slot, all zero between
// searches, and the slots a search touched.
type accumulator struct {
	scores  []float32
	touched []uint32
}

// checkEvery is how many postings (or candidates, or dense rows) a search
// scans between two looks at its context, so that a deadline stops a long
// scan within a fraction of a millisecond rather than when it is done.
const checkEvery = 1 << 14

// checkpoint is what a long scan does every checkEvery items: it returns
// ctx's error once ctx is done, and otherwise yields the processor, so that
// a costly search shares a core with short ones at that grain (tens of
// microseconds) rather than at the scheduler's 10 ms preemption.
func checkpoint(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	runtime.Gosched()
	return nil
}

// accumulate adds the contribution of every posting of lists, term at a
// time. Query terms are visited in increasing id order, so each record's
// score is summed in exactly the order vector.Sparse.Dot sums it and the
// result is bitwise equal to Dot. A slot is recorded as touched whenever its
// score is zero before an addition; a slot whose score returns to zero may
// be recorded twice, which collect tolerates. It looks at ctx every
// checkEvery postings; when ctx is done it leaves the accumulator clean and
// returns ctx's error.
func (x *invertedIndex) accumulate(ctx context.Context, lists []queryList, acc *accumulator) error {
	scores, touched := acc.scores, acc.touched[:cap(acc.touched)]
	n := 0
	budget := checkEvery
	for _, l := range lists {
		if len(touched)-n < len(l.postings) {
			touched = slices.Grow(touched[:n], len(l.postings))
			touched = touched[:cap(touched)]
		}
		qw := l.weight
		for postings := l.postings; len(postings) > 0; {
			chunk := postings[:min(len(postings), budget)]
			postings = postings[len(chunk):]
			for _, p := range chunk {
				s := scores[p.slot]
				// Branch-free: always store, advance only for a new slot.
				touched[n] = p.slot
				if s == 0 {
					n++
				}
				scores[p.slot] = s + qw*p.weight
			}
			if budget -= len(chunk); budget == 0 {
				budget = checkEvery
				if err := checkpoint(ctx); err != nil {
					acc.touched = touched[:n]
					acc.reset()
					return err
				}
			}
		}
	}
	acc.touched = touched[:n]
	return nil
}

// postings returns how many postings lists hold: the work a sparse search
// of them does.
func postings(lists []queryList) int {
	total := 0
	for _, l := range lists {
		total += len(l.postings)
	}
	return total
}

// queryList is one query term's weight, postings, block maxima and group
// index (empty unless the list is dense).
type queryList struct {
	weight   float32
	postings []posting
	blockMax []float32
	top      float32 // the largest weight magnitude among postings
	groups   groupIndex
}

// queryLists returns the postings of q's non-zero terms in increasing term
// order.
func (x *invertedIndex) queryLists(q *vector.Sparse) []queryList {
	out := make([]queryList, 0, len(q.Indices))
	for i, t := range q.Indices {
		if q.Values[i] == 0 {
			continue
		}
		if li, ok := x.terms[t]; ok {
			out = append(out, queryList{weight: q.Values[i], postings: x.lists[li], blockMax: x.blockMax[li], top: x.tops[li], groups: x.groups[li]})
		}
	}
	return out
}

// collect offers every positive score to h and zeroes the touched scores, so
// the accumulator is clean for the next search. A duplicate touched entry
// reads the zero its first occurrence left and is skipped. It looks at ctx
// every checkEvery candidates; when ctx is done it leaves the accumulator
// clean and returns ctx's error.
func (acc *accumulator) collect(ctx context.Context, h *topK) error {
	scores := acc.scores
	floor := h.floor()
	for i, slot := range acc.touched {
		if i%checkEvery == checkEvery-1 {
			if err := checkpoint(ctx); err != nil {
				acc.touched = acc.touched[i:]
				acc.reset()
				return err
			}
		}
		s := scores[slot]
		if s == 0 {
			continue
		}
		scores[slot] = 0
		if s > 0 && s >= floor {
			h.offer(s, slot)
			floor = h.floor()
		}
	}
	acc.touched = acc.touched[:0]
	return nil
}

// reset zeroes the scores of the touched slots and forgets them, leaving
// the accumulator clean after an abandoned search.
func (acc *accumulator) reset() {
	for _, slot := range acc.touched {
		acc.scores[slot] = 0
	}
	acc.touched = acc.touched[:0]
}

// compacted returns the index with tombstoned postings dropped and slots
// renumbered through remap, packed into one allocation; terms left without
// postings disappear.
func (x *invertedIndex) compacted(remap []uint32) invertedIndex {
	counts := make([]int, len(x.lists))
	total := 0
	for li, list := range x.lists {
		for _, p := range list {
			if remap[p.slot] != noSlot {
				counts[li]++
			}
		}
		total += counts[li]
	}
	n := invertedIndex{terms: make(map[uint32]uint32, len(x.lists)), total: total}
	all := make([]posting, 0, total)
	for li, list := range x.lists {
		if counts[li] == 0 {
			continue
		}
		start := len(all)
		for _, p := range list {
			if s := remap[p.slot]; s != noSlot {
				all = append(all, posting{slot: s, weight: p.weight})
			}
		}
		n.terms[x.keys[li]] = uint32(len(n.lists))
		n.keys = append(n.keys, x.keys[li])
		n.lists = append(n.lists, all[start:len(all):len(all)])
		n.blockMax = append(n.blockMax, blockMaxima(n.lists[len(n.lists)-1]))
		n.groups = append(n.groups, freshGroupIndex(n.lists[len(n.lists)-1]))
		n.tops = append(n.tops, largest(n.blockMax[len(n.blockMax)-1]))
	}
	return n
}

func (x *invertedIndex) memory() int64 {
	mem := 8*int64(x.total) + 28*int64(len(x.lists)) + 4*int64(cap(x.keys))
	for _, l := range x.lists {
		mem += 8 * int64(cap(l)-len(l))
	}
	for _, m := range x.blockMax {
		mem += 24 + 4*int64(cap(m))
	}
	mem += 4 * int64(cap(x.tops))
	for _, g := range x.groups {
		mem += 56 + int64(cap(g.max)) + 4*int64(cap(g.starts))
	}
	// Swiss-table maps hold a control byte plus the 8-byte entry per slot
	// at up to 7/8 load; 12 bytes per term is a fair estimate.
	return mem + 12*int64(len(x.terms))
}
