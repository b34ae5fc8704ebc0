package embedded

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"

	"github.com/parentrag/parentrag/internal/index/heaps"
	"github.com/parentrag/parentrag/internal/index/maxima"
)

// Grouped pruned search: bound every group of slots first, seed the floor
// from the best groups, then score only the groups that can still reach it.
//
// A query of frequent words only is the slow case of windowed MaxScore
// (embedded_prune_window.go): every term is essential, and every block of
// 128 postings of every term holds a weight close to the term's largest, so
// no window, block or candidate is ruled out until most postings are read.
// Grouped search instead adds up, for every group of groupSlots slots, the
// bounds of all query terms over it: a dense term's stored group maximum
// (one byte per group, see embedded_prune_groups.go) or, for a term too
// sparse to store them, the largest weight among its postings in the group
// (its postings are read once for that). That costs one addition per group
// and dense term, fewer and far cheaper operations than scanning the
// term's postings, and bounds each group tightly: only the few groups
// holding a record with near-maximal weights in most terms can reach the
// k-th score.
//
// The floor is seeded before the sweep: the seedGroups groups (k, if more)
// with the largest bounds are scored first (they hold the likely best
// records), which fills the top k with a floor close to its final value.
// The sweep then scores the groups whose bound still reaches the floor,
// best bound first (embedded_prune_sweep.go), a batch at a time, term by
// term (embedded_prune_batch.go): each record's products are summed in
// increasing term order, as offer sums them, so the hits, scores and ties
// are the exhaustive scan's. A seeded group is not scored again.
//
// Exactness: group bounds are float32 sums of float32 products of the
// query weight magnitudes and group maxima (never below the weights they
// bound), added in whatever order (term by term, or four terms per group
// at a time), so each is at most (n+1)·2^-23 below the float64 bound windowed
// search uses, plus underflow; groupCannotReach widens them by that before
// the same strict comparison with the floor. A group whose bound is zero
// is skipped: every product of its terms then rounds to zero, so none of
// its records can score above zero, which a hit must.

// seedGroups is how many groups, at least, are scored before the sweep:
// those of largest bound. The top k records are rarely in the k groups of
// largest bound (a group's bound adds the best weight of each term over
// four records), but nearly always among the few hundred largest.
const seedGroups = 160

// groupChunk is how many groups' bounds are summed at once: 16 KiB of
// bounds, which stay in the L1 cache while every term adds to them.
const groupChunk = 1 << 12

var groupBoundPool = sync.Pool{New: func() any { return new([]float32) }}

// getGroupBounds returns n group bounds from the pool, not cleared
// (boundGroups clears each chunk as it starts on it, while it is in the
// cache).
func getGroupBounds(n int) *[]float32 {
	ub := groupBoundPool.Get().(*[]float32)
	if cap(*ub) < n {
		*ub = make([]float32, n)
	}
	*ub = (*ub)[:n]
	return ub
}

// groupedPays reports whether grouped search should answer the query,
// over a store of the given number of slots: when its dense terms (those
// keeping group maxima) together bound more than what its heaviest other
// term does, divided by the store's size in units of minGroupedSlots.
// Otherwise windowed MaxScore is cheaper: once the floor passes the dense
// terms' bounds, which the heaviest term's records soon lift it to, it
// leaves them non-essential and only probes them for a few candidates,
// while grouped search would still read a bound per group of each. The
// factor grows with the store because windowed search's cost grows faster
// than grouped search's: at 100k children the two cost the same where the
// dense terms bound about a third of the heaviest other term, at 1M
// children grouped search was faster down to a twentieth
// (docs/benchmarks.md, "Pruned search").
func (s *pruneSearch) groupedPays(slots int) bool {
	var dense, heaviest float64
	for i := range s.cur {
		if s.cur[i].groups != nil {
			dense += s.cur[i].bound
		} else {
			heaviest = max(heaviest, s.cur[i].bound)
		}
	}
	return dense*float64(slots)/minGroupedSlots > heaviest
}

// runGrouped ranks the records of a store of the given number of slots by
// grouped search. It looks at ctx between chunks and runs of groups and
// returns ctx's error once ctx is done, leaving the window scratch clean.
func (s *pruneSearch) runGrouped(ctx context.Context, slots int) error {
	n := (slots + groupSlots - 1) / groupSlots
	ubp := getGroupBounds(n)
	defer groupBoundPool.Put(ubp)
	ub := *ubp
	seeds := groupSeeds{k: max(s.h.k, seedGroups)}
	if err := s.boundGroups(ctx, ub, &seeds); err != nil {
		return err
	}
	s.scoreSeeds(ub, &seeds)
	return s.sweepGroups(ctx, ub)
}

// groupCannotReach is cannotReach for a bound that is itself a float32 sum
// of n float32 products: widen and slack grow by what that sum may lose to
// rounding and underflow.
func (s *pruneSearch) groupCannotReach(ub float32) bool {
	n := float64(len(s.cur))
	return float64(ub)*s.widen*(1+(n+1)*0x1p-23)+s.slack+(n+1)*0x1p-149 < s.theta
}

// maximaPerPosting is how many group maxima boundGroups adds in the time
// a search spends on a posting, about: it adds eight per vector
// instruction. boundGroups counts its work in postings so that it looks at
// its context about as often as the other scans do (every checkEvery
// postings' worth, tens of microseconds), not several times a chunk.
const maximaPerPosting = 8

// boundGroups sums every term's bound over each group into ub, chunk by
// chunk, and offers each group to seeds.
func (s *pruneSearch) boundGroups(ctx context.Context, ub []float32, seeds *groupSeeds) error {
	budget := checkEvery
	for c0 := 0; c0 < len(ub); c0 += groupChunk {
		c1 := min(c0+groupChunk, len(ub))
		clear(ub[c0:c1])
		work := s.addDenseBounds(ub[c0:c1], c0) / maximaPerPosting
		for i := range s.cur {
			if s.cur[i].groups == nil {
				work += s.cur[i].addPostingBounds(ub[c0:c1], s.win.maxBits[:], c0)
			}
		}
		chunk := ub[c0:c1]
		for g := maxima.FirstAtLeast(chunk, 0, above(seeds.least)); g < len(chunk); g = maxima.FirstAtLeast(chunk, g+1, above(seeds.least)) {
			seeds.offer(chunk[g], c0+g)
		}
		for budget -= work; budget <= 0; budget += checkEvery {
			if err := checkpoint(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// addDenseBounds adds the stored group maxima of every dense term over
// groups first, first+1, ... to ub and returns how many maxima it read.
// It adds four terms per pass where they cover all the groups (fewer
// passes over ub: with vector instructions, each bound is read and
// written once per four terms; the scalar loop also has four independent
// products per group for the processor to overlap).
func (s *pruneSearch) addDenseBounds(ub []float32, first int) int {
	var full [4]*pruneCursor
	n, work := 0, 0
	for i := range s.cur {
		c := &s.cur[i]
		switch {
		case c.groups == nil, c.absQ == 0: // a zero weight adds nothing (and 0 times an infinite bound is NaN)
		case len(c.groups) < first+len(ub):
			work += c.addGroupMaxBounds(ub, first)
		default:
			full[n] = c
			if n++; n == len(full) {
				addFourGroupMaxima(ub, first, full)
				work += 4 * len(ub)
				n = 0
			}
		}
	}
	if n >= 2 && !maxima.Vector {
		addTwoGroupMaxima(ub, first, full[0], full[1])
		work += 2 * len(ub)
		full[0] = full[2]
		n -= 2
	}
	for _, c := range full[:n] {
		work += c.addGroupMaxBounds(ub, first)
	}
	return work
}

// addFourGroupMaxima adds the four cursors' maxima over groups first,
// first+1, ... to ub, each times its query weight magnitude; every cursor
// holds maxima for all of them.
func addFourGroupMaxima(ub []float32, first int, c [4]*pruneCursor) {
	var m [4][]uint8
	var unit, q [4]float32
	for i, ci := range c {
		m[i], unit[i], q[i] = ci.groups[first:first+len(ub)], ci.unit, float32(ci.absQ)
	}
	if maxima.Vector {
		maxima.AddFourScaled(ub, &m, &unit, &q)
		return
	}
	for g := range ub {
		ub[g] += (q[0]*maxima.Decoded(m[0][g], unit[0]) + q[1]*maxima.Decoded(m[1][g], unit[1])) +
			(q[2]*maxima.Decoded(m[2][g], unit[2]) + q[3]*maxima.Decoded(m[3][g], unit[3]))
	}
}

// addTwoGroupMaxima adds the two cursors' maxima over groups first,
// first+1, ... to ub, each times its query weight magnitude; both hold
// maxima for all of them.
func addTwoGroupMaxima(ub []float32, first int, c, d *pruneCursor) {
	a, b := c.groups[first:first+len(ub)], d.groups[first:first+len(ub)]
	qa, qb, ua, ud := float32(c.absQ), float32(d.absQ), c.unit, d.unit
	for g := range ub {
		ub[g] += qa*maxima.Decoded(a[g], ua) + qb*maxima.Decoded(b[g], ud)
	}
}

// addGroupMaxBounds adds the cursor's stored maxima over groups first,
// first+1, ... to ub and returns how many it read.
func (c *pruneCursor) addGroupMaxBounds(ub []float32, first int) int {
	if first >= len(c.groups) {
		return 0
	}
	gm := c.groups[first:min(first+len(ub), len(c.groups))]
	maxima.AddScaled(ub[:len(gm)], gm, c.unit, float32(c.absQ))
	return len(gm)
}

// addPostingBounds adds the bound of a term without group maxima over
// groups first, first+1, ... to ub: it reads the term's postings in those
// groups, advancing the cursor, and adds the largest weight of each group.
// It returns how many postings it read. scratch (len(ub) words at least)
// is all zero before and after.
func (c *pruneCursor) addPostingBounds(ub []float32, scratch []uint32, first int) int {
	end := uint32(min(uint64(first+len(ub))*groupSlots, noSlot))
	p := c.postings[c.pos:]
	j, _ := slices.BinarySearchFunc(p, end, func(e posting, slot uint32) int { return cmp.Compare(e.slot, slot) })
	p = p[:j]
	c.pos += j
	q := float32(c.absQ)
	if j < len(ub)/8 {
		// Few postings: add each group's maximum as it is found.
		for i := 0; i < len(p); {
			g := groupOf(p[i].slot)
			m := absWeight(p[i].weight)
			for i++; i < len(p) && groupOf(p[i].slot) == g; i++ {
				m = max(m, absWeight(p[i].weight))
			}
			ub[g-first] += q * m
		}
		return j
	}
	// Many: take the maxima in scratch first, branch-free, as bits (a
	// magnitude's bits order as the magnitude does).
	m := scratch[:len(ub)]
	for _, e := range p {
		g := groupOf(e.slot) - first
		m[g] = max(m[g], math.Float32bits(e.weight)&^signBit)
	}
	maxima.AddScaledBits(ub, m, q)
	return j
}

// signBit is a float32's sign bit.
const signBit = 1 << 31

// rewind moves every cursor back to its first posting.
func (s *pruneSearch) rewind() {
	for i := range s.cur {
		s.cur[i].pos, s.cur[i].block = 0, 0
	}
}

// sweepCutoff returns the smallest bound of a group the sweep scores: at
// or above groupCutoff, and above zero.
func (s *pruneSearch) sweepCutoff() float32 { return max(s.groupCutoff(), above(0)) }

// above returns the smallest float32 greater than x (x itself for +Inf).
func above(x float32) float32 { return math.Nextafter32(x, float32(math.Inf(1))) }

// groupCutoff returns the smallest float32 bound groupCannotReach lets
// through at the current floor (the test is monotonic in the bound), so
// that the sweep compares float32s.
func (s *pruneSearch) groupCutoff() float32 {
	if math.IsInf(s.theta, -1) {
		return float32(math.Inf(-1))
	}
	n := float64(len(s.cur))
	u := float32((s.theta - s.slack - (n+1)*0x1p-149) / (s.widen * (1 + (n+1)*0x1p-23)))
	for s.groupCannotReach(u) {
		u = math.Nextafter32(u, float32(math.Inf(1)))
	}
	for d := math.Nextafter32(u, float32(math.Inf(-1))); !s.groupCannotReach(d); d = math.Nextafter32(u, float32(math.Inf(-1))) {
		u = d
	}
	return u
}

// groupSeeds keeps the k groups of largest bound offered so far, in a
// heap whose root is the smallest bound.
type groupSeeds struct {
	k     int
	least float32 // the smallest bound kept once k are, 0 before
	heap  []groupSeed
}

// groupSeed is a group and its bound.
type groupSeed struct {
	bound float32
	group int
}

// smallerBound orders the heap of groupSeeds.
func smallerBound(a, b groupSeed) bool { return a.bound < b.bound }

// offer considers group g of bound ub.
func (h *groupSeeds) offer(ub float32, g int) {
	if !(ub > 0) {
		return
	}
	if len(h.heap) < h.k {
		h.heap = heaps.Push(h.heap, groupSeed{ub, g}, smallerBound)
		if len(h.heap) == h.k {
			h.least = h.heap[0].bound
		}
		return
	}
	if ub <= h.heap[0].bound {
		return
	}
	heaps.ReplaceRoot(h.heap, groupSeed{ub, g}, smallerBound)
	h.least = h.heap[0].bound
}
