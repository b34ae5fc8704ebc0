package embedded

import (
	"context"
	"math"
	"slices"

	"github.com/parentrag/parentrag/internal/index/maxima"
)

// The sweep of grouped search scores the groups the seeds could not rule
// out best bound first.
//
// Once the seeds are scored, every group whose bound reaches the floor
// they set may hold a record of the top k; scoring one lifts the floor
// only if it holds a better record than the k-th, which the groups of
// largest bound most likely do. So the sweep orders those groups by bound
// and scores them from the largest down, a batch at a time, rereading the
// floor after each batch, and stops at the first group whose bound is
// below it: every later one's is too. In slot order, a group of small
// bound early in the store was scored before the better groups after it
// raised the floor; best first, the slowest questions at 1M children
// score a quarter to a half fewer groups.
//
// Exactness: a group is left unscored only when its bound is below the
// floor at the time (every bound after it in the order is at most its
// own, and the floor never falls), which is the test the slot-order sweep
// applied; within a batch the groups are scored in slot order, as
// scoreBatch requires, each record's products summed as offer sums them.

// firstSeeds is how many seed groups, at least, scoreSeeds scores in its
// first batch: enough to fill the top k of 20 records, so that the floor
// is set and the other seeds can be dropped early (no group can be while
// the top k is not full).
const firstSeeds = 32

// scoreSeeds scores the seed groups best bound first: the first
// firstSeeds (k, if more) in one batch, then those whose bound still
// reaches the floor, a batch at a time. It zeroes all their bounds, so
// that the sweep does not score them again (those not scored are below
// the floor, which only rises), and ends with the cursors rewound.
func (s *pruneSearch) scoreSeeds(ub []float32, seeds *groupSeeds) {
	order := s.win.order[:0]
	for _, sd := range seeds.heap {
		order = append(order, packGroupBound(sd.bound, sd.group))
	}
	slices.Sort(order)
	s.win.order = order
	order, _ = s.scoreBest(order, min(max(s.h.k, firstSeeds), batchGroups))
	for len(order) > 0 {
		order, _ = s.scoreBest(order, batchGroups)
	}
	for _, sd := range seeds.heap {
		ub[sd.group] = 0
	}
	s.rewind()
}

// sweepGroups scores, best bound first and a batch at a time, every group
// whose bound can still reach the floor. It looks at ctx between batches
// and returns ctx's error once ctx is done.
func (s *pruneSearch) sweepGroups(ctx context.Context, ub []float32) error {
	order := s.byGroupBound(ub)
	budget := checkEvery
	for len(order) > 0 {
		before := s.visited
		var scored int
		order, scored = s.scoreBest(order, batchGroups)
		for budget -= s.visited - before + scored; budget <= 0; budget += checkEvery {
			if err := checkpoint(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// scoreBest scores in one batch the groups of the last n of order (the
// best) whose bound reaches the sweep's cutoff, and returns the rest of
// order and how many it scored. The rest is empty once a bound is below
// the cutoff: every bound before it in order is at most its own.
func (s *pruneSearch) scoreBest(order []uint64, n int) (rest []uint64, scored int) {
	cut := s.sweepCutoff()
	batch := s.win.batch.group[:0]
	for ; len(order) > 0 && len(batch) < n; order = order[:len(order)-1] {
		b, g := unpackGroupBound(order[len(order)-1])
		if b < cut {
			order = order[:0]
			break
		}
		batch = append(batch, g)
	}
	if len(batch) > 0 {
		slices.Sort(batch)
		s.rewind()
		s.scoreBatch(batch)
	}
	return order, len(batch)
}

// byGroupBound returns the groups whose bound in ub reaches the sweep's
// cutoff, packed with their bounds (packGroupBound) in increasing order of
// bound, then group: the best last. It keeps them in the window's scratch.
func (s *pruneSearch) byGroupBound(ub []float32) []uint64 {
	order := s.win.order[:0]
	cut := s.sweepCutoff()
	for g := maxima.FirstAtLeast(ub, 0, cut); g < len(ub); g = maxima.FirstAtLeast(ub, g+1, cut) {
		order = append(order, packGroupBound(ub[g], g))
	}
	slices.Sort(order)
	s.win.order = order
	return order
}

// packGroupBound packs a group and its bound, a positive float32, into one
// integer whose order is the bound's, then the group's: a positive
// float32's bits order as the float does.
func packGroupBound(b float32, g int) uint64 {
	return uint64(math.Float32bits(b))<<32 | uint64(uint32(g))
}

// unpackGroupBound returns the bound and group packGroupBound packed.
func unpackGroupBound(x uint64) (float32, int) {
	return math.Float32frombits(uint32(x >> 32)), int(uint32(x))
}
