package vectorstore

import (
	"context"
	"slices"
	"sync"
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
// (one bfloat16 per group, see embedded_prune_groups.go) or, for a term too
// sparse to store them, the largest weight among its postings in the group
// (its postings are read once for that). That costs one addition per group
// and dense term, about an eighth of what scanning the term's postings
// costs, and bounds each group tightly: only the few groups holding a
// record with near-maximal weights in most terms can reach the k-th score.
//
// The floor is seeded before the sweep: the k groups with the largest
// bounds are scored first (they hold the likely best records), which fills
// the top k with a floor close to its final value. The sweep then walks
// the groups in slot order, skips those whose bound is below the floor,
// and scores the others (runs of them at once) exactly as windowed search
// scores a window's candidates: each term's postings there are gathered and
// each record's products summed in increasing term order (offer), so the
// hits, scores and ties are the exhaustive scan's. A seeded group is not
// scored again.
//
// Exactness: group bounds are float32 sums of float32 products of the
// query weight magnitudes and group maxima (never below the weights they
// bound), so each is at most (n+1)·2^-23 below the float64 bound windowed
// search uses, plus underflow; groupWiden and groupSlack widen them by
// that before the same strict comparison with the floor (cannotReach).

// groupChunk is how many groups' bounds are summed at once: 16 KiB of
// bounds, which stay in the L1 cache while every term adds to them.
const groupChunk = 1 << 12

var groupBoundPool = sync.Pool{New: func() any { return new([]float32) }}

// getGroupBounds returns n zeroed group bounds from the pool.
func getGroupBounds(n int) *[]float32 {
	ub := groupBoundPool.Get().(*[]float32)
	if cap(*ub) < n {
		*ub = make([]float32, n)
	}
	*ub = (*ub)[:n]
	clear(*ub)
	return ub
}

// hasGroupMaxima reports whether any query term keeps group maxima, which
// is when grouped search pays.
func (s *pruneSearch) hasGroupMaxima() bool {
	for i := range s.cur {
		if s.cur[i].groups != nil {
			return true
		}
	}
	return false
}

// runGrouped ranks the records of a store of the given number of slots by
// grouped search. It looks at ctx between chunks and runs of groups and
// returns ctx's error once ctx is done, leaving the window scratch clean.
func (s *pruneSearch) runGrouped(ctx context.Context, slots int) error {
	ubp := getGroupBounds((slots + groupSlots - 1) / groupSlots)
	defer groupBoundPool.Put(ubp)
	ub := *ubp
	seeds := groupSeeds{k: s.h.k}
	if err := s.boundGroups(ctx, ub, &seeds); err != nil {
		return err
	}
	s.scoreSeeds(ub, seeds.groups)
	return s.sweepGroups(ctx, ub)
}

// groupWiden and groupSlack are widen and slack enlarged for a bound that
// is itself a float32 sum of n float32 products.
func (s *pruneSearch) groupCannotReach(ub float32) bool {
	n := float64(len(s.cur))
	return float64(ub)*s.widen*(1+(n+1)*0x1p-23)+s.slack+(n+1)*0x1p-149 < s.theta
}

// boundGroups sums every term's bound over each group into ub, chunk by
// chunk, and offers each group to seeds.
func (s *pruneSearch) boundGroups(ctx context.Context, ub []float32, seeds *groupSeeds) error {
	budget := checkEvery
	for c0 := 0; c0 < len(ub); c0 += groupChunk {
		c1 := min(c0+groupChunk, len(ub))
		work := 0
		for i := range s.cur {
			work += s.cur[i].addGroupBounds(ub[c0:c1], c0)
		}
		for g, b := range ub[c0:c1] {
			if b > seeds.least {
				seeds.offer(b, c0+g)
			}
		}
		for budget -= work; budget <= 0; budget += checkEvery {
			if err := checkpoint(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// addGroupBounds adds the cursor's bound over groups first, first+1, ... to
// ub and returns how many group maxima or postings it read. A dense term
// adds its stored maxima; another reads its postings in those groups,
// advancing the cursor, and adds the largest weight of each group.
func (c *pruneCursor) addGroupBounds(ub []float32, first int) int {
	q := float32(c.absQ)
	if c.groups != nil {
		if first >= len(c.groups) {
			return 0
		}
		gm := c.groups[first:min(first+len(ub), len(c.groups))]
		ub = ub[:len(gm)]
		for g, h := range gm {
			ub[g] += q * bf16(h)
		}
		return len(gm)
	}
	end := uint64(first+len(ub)) * groupSlots
	p := c.postings[c.pos:]
	j := 0
	for j < len(p) && uint64(p[j].slot) < end {
		g := groupOf(p[j].slot)
		m := absWeight(p[j].weight)
		for j++; j < len(p) && groupOf(p[j].slot) == g; j++ {
			m = max(m, absWeight(p[j].weight))
		}
		ub[g-first] += q * m
	}
	c.pos += j
	return j
}

// rewind moves every cursor back to its first posting.
func (s *pruneSearch) rewind() {
	for i := range s.cur {
		s.cur[i].pos, s.cur[i].block = 0, 0
	}
}

// scoreSeeds scores the seed groups, in slot order, and zeroes their
// bounds so that the sweep does not score them again. It starts and ends
// with the cursors rewound.
func (s *pruneSearch) scoreSeeds(ub []float32, groups []int) {
	s.rewind()
	slices.Sort(groups)
	for _, g := range groups {
		s.scoreGroups(g, g+1)
		ub[g] = 0
	}
	s.rewind()
}

// sweepGroups scores, in slot order, every run of groups whose bound can
// still reach the floor.
func (s *pruneSearch) sweepGroups(ctx context.Context, ub []float32) error {
	const maxRun = windowSize / groupSlots
	budget := checkEvery
	for g := 0; g < len(ub); g++ {
		if !s.groupMayReach(ub[g]) {
			continue
		}
		end := g + 1
		for end < len(ub) && end-g < maxRun && s.groupMayReach(ub[end]) {
			end++
		}
		before := s.visited
		s.scoreGroups(g, end)
		g = end - 1
		for budget -= s.visited - before + 1; budget <= 0; budget += checkEvery {
			if err := checkpoint(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// groupMayReach reports whether a group bounded by ub may hold a record
// scoring above zero and at or above the floor.
func (s *pruneSearch) groupMayReach(ub float32) bool {
	return ub > 0 && !s.groupCannotReach(ub)
}

// scoreGroups gathers every term's postings in groups [from, to) and
// offers each live record there with its exact score.
func (s *pruneSearch) scoreGroups(from, to int) {
	base, end := uint32(from*groupSlots), uint32(to*groupSlots)
	for i := range s.cur {
		s.gather(i, base, end)
	}
	s.decide(base, int(end-base), 0)
}

// groupSeeds keeps the k groups of largest bound offered so far, in a
// min-heap on the bound.
type groupSeeds struct {
	k      int
	least  float32 // the smallest bound kept once k are, 0 before
	bounds []float32
	groups []int
}

// offer considers group g of bound ub.
func (h *groupSeeds) offer(ub float32, g int) {
	if !(ub > 0) {
		return
	}
	if len(h.groups) < h.k {
		h.bounds, h.groups = append(h.bounds, ub), append(h.groups, g)
		h.up(len(h.groups) - 1)
		if len(h.groups) == h.k {
			h.least = h.bounds[0]
		}
		return
	}
	if ub <= h.bounds[0] {
		return
	}
	h.bounds[0], h.groups[0] = ub, g
	h.down(0)
	h.least = h.bounds[0]
}

func (h *groupSeeds) swap(i, j int) {
	h.bounds[i], h.bounds[j] = h.bounds[j], h.bounds[i]
	h.groups[i], h.groups[j] = h.groups[j], h.groups[i]
}

func (h *groupSeeds) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h.bounds[i] >= h.bounds[p] {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *groupSeeds) down(i int) {
	for {
		m := i
		if l := 2*i + 1; l < len(h.bounds) && h.bounds[l] < h.bounds[m] {
			m = l
		}
		if r := 2*i + 2; r < len(h.bounds) && h.bounds[r] < h.bounds[m] {
			m = r
		}
		if m == i {
			return
		}
		h.swap(i, m)
		i = m
	}
}
