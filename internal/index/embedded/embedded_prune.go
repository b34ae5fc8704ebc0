package embedded

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/parentrag/parentrag/internal/index"
)

// Pruned sparse search is block-max MaxScore, in windows of slots.
//
// Every term's list has a stored maximum weight per block of 128 postings
// (blockMax). Once the top k is full, the terms whose bounds together
// cannot lift a record to the k-th score are "non-essential": no record
// holding only those can enter, so their postings are never walked, only
// probed for candidates. The search walks slots in windows of 4096: it
// first bounds the window by every term's block maxima and skips it whole
// when that cannot reach the k-th score; otherwise it gathers the
// essential terms' postings in the window into scratch (a few nanoseconds
// a posting, as the exhaustive scan costs), also gathers the non-essential
// terms dense enough in the window that gathering is cheaper than probing,
// and decides the touched slots in slot order, narrowing each one's bound
// term by term (window bound, block bound, actual weight) until it either
// cannot reach the floor or is scored.
//
// Why MaxScore and not block-max WAND: queries here are short (3 to a few
// dozen terms) and their frequent terms carry small weights, which is what
// MaxScore exploits; WAND re-sorts its cursors at every step to find a
// pivot, which costs more than it saves with few, very unequal lists, and
// walks one posting at a time where MaxScore gathers the essential lists
// in bulk. Windows let the bulk gathering and the block skipping share one
// loop, as Lucene's block-max MaxScore does.
//
// Exactness: a record is dropped only when a float64 upper bound on the
// magnitude of every term's contribution, widened by the worst rounding a
// float32 sum of that many products can add, is strictly below the k-th
// kept score, so no record that could enter the top k (ties included) is
// lost. The records kept are scored by summing their float32 products in
// increasing query-term order, exactly as the exhaustive scan and
// vector.Sparse.Dot do, so the top k, its scores (bit for bit) and its
// order (score, then id) equal the exhaustive scan's. Queries of more than
// maxPrunedTerms terms, or whose bounds could overflow float32, are
// scanned exhaustively.
//
// A query whose dense terms carry enough of its bound is answered by
// grouped search instead (embedded_prune_grouped.go), which bounds groups
// of 4 slots rather than blocks of postings; the cursors, window scratch
// and scoring are shared.

// pruneCursor walks one query term's postings.
type pruneCursor struct {
	postings []posting
	blockMax []float32
	groups   []uint8  // group maxima, nil unless the list is dense
	unit     float32  // what one of groups stands for
	starts   []uint32 // posting index per run of startSlots slots, with groups
	weight   float32  // the query term's weight
	absQ     float64  // its magnitude
	bound    float64  // absQ times the list's largest weight magnitude
	pos      int      // next posting
	block    int      // block holding the first posting at or after the last probe
}

func newPruneCursor(l queryList) pruneCursor {
	c := pruneCursor{postings: l.postings, blockMax: l.blockMax, groups: l.groups.max, unit: l.groups.unit, starts: l.groups.starts, weight: l.weight, absQ: math.Abs(float64(l.weight))}
	c.bound = c.absQ * float64(l.top)
	return c
}

// slot returns the slot of the next posting, noSlot once exhausted.
func (c *pruneCursor) slot() uint32 {
	if c.pos < len(c.postings) {
		return c.postings[c.pos].slot
	}
	return noSlot
}

// blockLast returns the last slot of the cursor's current block.
func (c *pruneCursor) blockLast() uint32 {
	return c.postings[min((c.block+1)*blockSize, len(c.postings))-1].slot
}

// blockBound moves to the block that may hold slot and returns the bound
// on the term's contribution to slot: 0 when no later posting exists.
func (c *pruneCursor) blockBound(slot uint32) float64 {
	for c.block < len(c.blockMax) && c.blockLast() < slot {
		c.block++
	}
	if c.block == len(c.blockMax) {
		return 0
	}
	return c.absQ * float64(c.blockMax[c.block])
}

// windowBound returns the bound on the term's contribution to any slot in
// [base, end), from the maxima of the blocks that overlap it, and how many
// blocks those are.
func (c *pruneCursor) windowBound(base, end uint32) (bound float64, blocks int) {
	c.blockBound(base)
	m := float32(0)
	b := c.block
	for ; b < len(c.blockMax) && c.postings[b*blockSize].slot < end; b++ {
		m = max(m, c.blockMax[b])
	}
	return c.absQ * float64(m), b - c.block
}

// seek moves to the first posting at or after slot and returns its weight
// when it is slot's. It reports how many postings it compared. Probes come
// in increasing slot order, so the posting sought is often a few steps
// ahead: a galloping search finds it in time logarithmic in the distance.
func (c *pruneCursor) seek(slot uint32) (w float32, found bool, looked int) {
	if c.blockBound(slot); c.block == len(c.blockMax) {
		c.pos = len(c.postings)
		return 0, false, 0
	}
	start := max(c.pos, c.block*blockSize)
	p := c.postings[start:min((c.block+1)*blockSize, len(c.postings))]
	// p's last slot is at least slot. Gallop: p[lo] < slot <= p[hi].
	lo, hi, step := -1, 0, 1
	for looked = 1; p[hi].slot < slot; looked++ {
		lo, hi = hi, min(hi+step, len(p)-1)
		step *= 2
	}
	hi = narrow(p, lo, hi, slot, &looked)
	c.pos = start + hi
	return p[hi].weight, p[hi].slot == slot, looked
}

// narrow binary-searches p between lo and hi, where p[lo] is before slot
// (lo may be -1) and p[hi] at or after it (hi may be len(p)), and returns
// the index of the first posting at or after slot; it counts its
// comparisons in looked.
func narrow(p []posting, lo, hi int, slot uint32, looked *int) int {
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if p[m].slot < slot {
			lo = m
		} else {
			hi = m
		}
		*looked++
	}
	return hi
}

// advance moves to the first posting at or after slot and reports how
// many postings it compared. It guesses the posting's place from the
// density of the postings around it (a dense list's run of startSlots
// slots, or the whole list), then gallops from the guess, forwards or
// back, and finishes with a binary search: a few comparisons near the
// posting sought however far it is, where galloping from the current
// posting touches a cache line per doubling.
func (c *pruneCursor) advance(slot uint32) (looked int) {
	if c.starts != nil {
		return c.advanceDense(slot)
	}
	p := c.postings[c.pos:]
	if len(p) == 0 || p[0].slot >= slot {
		return 0
	}
	return c.search(p, 0, c.guess(p, slot), len(p), slot)
}

// search moves the cursor, whose remaining postings are p, to the first
// of p at or after slot, given p[lo].slot < slot (lo may be -1), that no
// posting from end on is before slot, and a guess in (lo, end]; it
// reports how many postings it compared.
func (c *pruneCursor) search(p []posting, lo, guess, end int, slot uint32) (looked int) {
	hi := guess
	looked = 1
	if hi < end && p[hi].slot < slot {
		lo, hi = c.gallopForward(p[:end], hi, slot, &looked)
	} else {
		lo = c.gallopBack(p, hi, lo, slot, &looked)
	}
	c.pos += narrow(p, lo, hi, slot, &looked)
	return looked
}

// advanceDense is advance over a dense list: the run of startSlots slots
// holding slot bounds where its posting can be (every posting before the
// run's first is at a lower slot, every posting of the next run's at a
// higher one), and the run's own density guesses where in it. It reads no
// posting but those near the guess, so moving a cursor to a far slot costs
// a cache miss or so, not one for the run's first posting too.
func (c *pruneCursor) advanceDense(slot uint32) (looked int) {
	r := int(slot / startSlots)
	if r >= len(c.starts) {
		c.pos = len(c.postings) // no posting at or after slot
		return 0
	}
	first := int(c.starts[r])
	end := len(c.postings)
	if r+1 < len(c.starts) {
		end = int(c.starts[r+1])
	}
	// Postings before the cursor are before the slots it was moved to,
	// which are at most slot; those before first, before the run.
	from := max(c.pos, first)
	if from >= end {
		c.pos = max(c.pos, end)
		return 0
	}
	guess := min(max(c.guessDense(slot), from), end)
	base := c.pos
	return c.search(c.postings[base:], from-1-base, guess-base, end-base, slot)
}

// guessDense estimates the index of a dense list's first posting at or
// after slot from the density of the run of startSlots slots holding it;
// slot is in a run the list has.
func (c *pruneCursor) guessDense(slot uint32) int {
	r := int(slot / startSlots)
	first, end := int(c.starts[r]), len(c.postings)
	if r+1 < len(c.starts) {
		end = int(c.starts[r+1])
	}
	return first + int(slot%startSlots)*(end-first)/startSlots
}

// guess estimates the index in p (whose first slot is below slot) of the
// first posting at or after slot, from the list's average density; it is
// in [1, len(p)].
func (c *pruneCursor) guess(p []posting, slot uint32) int {
	all := c.postings
	span := uint64(all[len(all)-1].slot-all[0].slot) + 1
	est := uint64(slot-p[0].slot) * uint64(len(all)) / span
	return int(min(max(est, 1), uint64(len(p))))
}

// gallopForward widens [from, hi) forwards from p[from].slot < slot until
// p[hi].slot >= slot or hi is past the end.
func (c *pruneCursor) gallopForward(p []posting, from int, slot uint32, looked *int) (lo, hi int) {
	lo, hi = from, from+1
	for step := 1; hi < len(p) && p[hi].slot < slot; step *= 2 {
		lo, hi = hi, min(hi+step, len(p))
		*looked++
	}
	return lo, min(hi, len(p))
}

// gallopBack moves back from hi, where p[hi].slot >= slot (or hi is an
// end past which no posting is before slot), to an lo
// above floor with p[lo].slot < slot, or to floor, which is before slot
// (p[floor].slot < slot, or floor is -1).
func (c *pruneCursor) gallopBack(p []posting, hi, floor int, slot uint32, looked *int) (lo int) {
	lo = hi - 1
	for step := 1; lo > floor && p[lo].slot >= slot; step *= 2 {
		lo = max(lo-step, floor)
		*looked++
	}
	return lo
}

// pruneSearch is the state of one pruned search.
type pruneSearch struct {
	cur     []pruneCursor // in increasing term order
	byBound []int         // cursor indices by ascending bound
	prefix  []float64     // prefix[i]: sum of the i smallest bounds
	widen   float64       // relative rounding allowance of a float32 sum
	slack   float64       // absolute allowance for underflowing products
	ne      int           // byBound[:ne] are the non-essential terms
	wbound  []float64     // each term's bound over the current window
	wblocks []int         // each term's blocks overlapping the window
	wprefix []float64     // wprefix[i]: window bounds of byBound[:i]
	visited int           // postings looked at
	h       *topK
	floor   float32
	theta   float64 // the floor as float64; -Inf while the top k is not full
	win     *pruneWindow
}

// maxSafeBound is the largest total bound pruned search accepts: below it no
// partial float32 sum can overflow, so the rounding allowance holds.
const maxSafeBound = math.MaxFloat32 / 4

// newPruneSearch prepares the cursors of lists, or reports false when the
// query has more than maxPrunedTerms terms or bounds too large for a safe
// rounding allowance (the caller then scans exhaustively).
func newPruneSearch(lists []queryList, h *topK) (*pruneSearch, bool) {
	n := len(lists)
	if n > maxPrunedTerms {
		return nil, false
	}
	s := &pruneSearch{
		cur: make([]pruneCursor, n), byBound: make([]int, n), prefix: make([]float64, n+1), h: h,
		wbound: make([]float64, n), wblocks: make([]int, n), wprefix: make([]float64, n+1),
		// Recursive float32 summation of m rounded products is within
		// m*2^-24/(1-m*2^-24) of the exact sum of magnitudes; (m+2)*2^-23
		// covers that and the float64 rounding of the bounds themselves.
		widen: 1 + float64(n+2)*0x1p-23,
		slack: float64(n+1) * 0x1p-149,
	}
	for i, l := range lists {
		s.cur[i] = newPruneCursor(l)
		s.byBound[i] = i
	}
	slices.SortStableFunc(s.byBound, func(a, b int) int { return cmp.Compare(s.cur[a].bound, s.cur[b].bound) })
	for i, c := range s.byBound {
		s.prefix[i+1] = s.prefix[i] + s.cur[c].bound
	}
	if s.prefix[n] > maxSafeBound {
		return nil, false
	}
	s.raiseFloor()
	return s, true
}

// cannotReach reports whether a record whose contributions are bounded in
// magnitude by bound cannot score at or above the floor.
func (s *pruneSearch) cannotReach(bound float64) bool {
	return bound*s.widen+s.slack < s.theta
}

// raiseFloor rereads the k-th score and moves every term that can no
// longer matter alone into the non-essential set.
func (s *pruneSearch) raiseFloor() {
	s.floor = s.h.floor()
	s.theta = float64(s.floor)
	for s.ne < len(s.byBound) && s.cannotReach(s.prefix[s.ne+1]) {
		s.ne++
	}
}

// next returns the smallest slot an essential cursor is at, noSlot when
// they are all exhausted or no term is essential any more.
func (s *pruneSearch) next() uint32 {
	d := uint32(noSlot)
	for _, i := range s.byBound[s.ne:] {
		d = min(d, s.cur[i].slot())
	}
	return d
}

// rankSparse ranks the records lists reach into h and returns how many
// postings it looked at. It prunes unless the store is set to scan
// exhaustively or the query's bounds are too large to prune safely; both
// ways give the same hits, scores and order.
func (e *Store) rankSparse(ctx context.Context, lists []queryList, h *topK) (int, error) {
	if !e.exhaustiveSparse.Load() {
		if s, ok := newPruneSearch(lists, h); ok {
			s.win = getWindow(len(lists))
			defer putWindow(s.win)
			var err error
			if e.grouped(s) {
				err = s.runGrouped(ctx, e.recs.slots())
			} else {
				err = s.run(ctx)
			}
			return s.visited, err
		}
	}
	acc := e.getAccumulator(e.recs.slots())
	defer e.accs.Put(acc)
	if err := e.sparse.accumulate(ctx, lists, acc); err != nil {
		return postings(lists), err
	}
	return postings(lists), acc.collect(ctx, h)
}

// SparseWork reports the sparse searches the store has answered since it
// was made or loaded and the postings they looked at: with pruning, a
// fraction of their terms' postings.
func (e *Store) SparseWork() (searches, postingsVisited int64) {
	return e.sparseSearches.Load(), e.postingsVisited.Load()
}

// SetExhaustiveSparse makes sparse search scan every posting of every
// query term (on) or prune (off, the default). Results are identical
// either way; the exhaustive scan exists to compare against and costs time
// proportional to the query terms' postings.
func (e *Store) SetExhaustiveSparse(on bool) { e.exhaustiveSparse.Store(on) }

// SetWindowedSparse makes pruned sparse search use windowed MaxScore for
// every query (on), or grouped search for the queries with a dense term
// (off, the default). Results are identical either way; it exists to
// compare the two.
func (e *Store) SetWindowedSparse(on bool) {
	if on {
		e.prunePath.Store(windowedOnly)
	} else {
		e.prunePath.Store(anyPath)
	}
}

// SearchFiltered is Search restricted to the records keep accepts: the
// best req.TopK among them, exactly as if the others were absent. keep sees
// each hit without its score, and only for records that would otherwise
// enter the result, so a filter that refuses most records still costs
// little. It applies to sparse and flat dense search; an HNSW search
// filters the neighbours it finds and may return fewer hits.
func (e *Store) SearchFiltered(ctx context.Context, req index.SearchRequest, keep func(index.Hit) bool) ([]index.Hit, error) {
	return e.search(ctx, req, func(slot uint32) bool { return keep(e.recs.hit(slot, 0)) })
}

// Pruned search paths, for tests that compare them: anyPath picks grouped
// search when it pays (groupedPays), windowedOnly never does and
// groupedOnly always does.
const (
	anyPath int32 = iota
	windowedOnly
	groupedOnly
)

// minGroupedSlots is the smallest store grouped search answers by
// default. Below it, grouped search's fixed costs (clearing and ranking
// the bounds of every group, scoring the seed groups) outweigh what it
// saves: at 10k children windowed MaxScore answered in 0.022 ms at the
// median against 0.058 ms, while from 100k children on grouped search is
// the faster (docs/benchmarks.md, "Pruned search").
const minGroupedSlots = 1 << 15

// grouped reports whether s runs grouped rather than windowed.
func (e *Store) grouped(s *pruneSearch) bool {
	switch e.prunePath.Load() {
	case windowedOnly:
		return false
	case groupedOnly:
		return true
	}
	slots := e.recs.slots()
	return slots >= minGroupedSlots && s.groupedPays(slots)
}
