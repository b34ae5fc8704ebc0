package vectorstore

import (
	"context"
	"math"
	"slices"
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

// sweepGroups scores, best bound first and a batch at a time, every group
// whose bound can still reach the floor. It looks at ctx between batches
// and returns ctx's error once ctx is done.
func (s *pruneSearch) sweepGroups(ctx context.Context, ub []float32) error {
	order := s.byGroupBound(ub)
	budget := checkEvery
	theta, cut := s.theta, s.sweepCutoff()
	for len(order) > 0 {
		batch := s.win.batch.group[:0]
		for ; len(order) > 0 && len(batch) < batchGroups; order = order[:len(order)-1] {
			b, g := unpackGroupBound(order[len(order)-1])
			if b < cut {
				order = order[:0]
				break
			}
			batch = append(batch, g)
		}
		if len(batch) == 0 {
			break
		}
		slices.Sort(batch)
		s.rewind()
		before := s.visited
		s.scoreBatch(batch)
		if s.theta != theta {
			theta, cut = s.theta, s.sweepCutoff()
		}
		for budget -= s.visited - before + len(batch); budget <= 0; budget += checkEvery {
			if err := checkpoint(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// byGroupBound returns the groups whose bound in ub reaches the sweep's
// cutoff, packed with their bounds (packGroupBound) in increasing order of
// bound, then group: the best last. It keeps them in the window's scratch.
func (s *pruneSearch) byGroupBound(ub []float32) []uint64 {
	order := s.win.order[:0]
	cut := s.sweepCutoff()
	for g := firstAtLeast(ub, 0, cut); g < len(ub); g = firstAtLeast(ub, g+1, cut) {
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
