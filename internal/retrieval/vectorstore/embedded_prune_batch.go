package vectorstore

import "math/bits"

// Batched group scoring: grouped search scores the groups it cannot rule
// out term by term over many groups at once rather than group by group.
//
// Scoring a group costs little arithmetic but a cache miss or two per
// query term: the term's posting index for the group's run of slots, then
// its postings there, both far from the last group's. Scored one group at
// a time, each term's search starts from where the previous group's ended,
// so those misses come one after another. Here a batch of groups, in slot
// order, is scored one term at a time, and a dense term finds its postings
// in each group from its posting index alone (not from where the last
// group's search ended), so the processor can have the misses of many
// groups in flight at once.
//
// Exactness: each slot's score is summed in increasing query-term order,
// starting from zero and adding the product of the query weight and the
// posting weight of every term the slot holds, exactly as offer sums
// them; the slots are then offered as offer does (positive, at or above
// the floor, live), so the top k, scores and ties are the exhaustive
// scan's.

// batchGroups is the most groups scoreBatch scores at once: enough for
// many cache misses to overlap, few enough that the floor the sweep
// compares with is rarely more than a batch out of date.
const batchGroups = 256

// batchSlots is how many slots a batch of groups spans.
const batchSlots = batchGroups * groupSlots

// groupBatch is the scratch of scoreBatch; score and held are clean (all
// zero) between batches.
type groupBatch struct {
	score   [batchSlots]float32     // the score summed so far at each slot
	held    [batchSlots / 64]uint64 // slots holding at least one query term
	group   [batchGroups]int        // the batch's groups, increasing
	touched uint32                  // what touch read, kept so that its loads are not dropped
}

// scoreBatch scores every record of the groups in groups (in increasing
// order, at most batchGroups) and offers each live one with its exact
// score. Cursors of terms without group maxima move forward, so a batch
// starts at or after where the previous one ended, or after a rewind.
func (s *pruneSearch) scoreBatch(groups []int) {
	b := &s.win.batch
	for i := range s.cur {
		if c := &s.cur[i]; c.starts != nil {
			b.touched ^= c.touch(groups)
		}
	}
	for i := range s.cur {
		s.addTermScores(&s.cur[i], groups)
	}
	for wi, word := range b.held[:(len(groups)*groupSlots+63)/64] {
		for ; word != 0; word &= word - 1 {
			off := wi*64 + bits.TrailingZeros64(word)
			score := b.score[off]
			b.score[off] = 0
			d := uint32(groups[off/groupSlots]*groupSlots + off%groupSlots)
			if score > 0 && score >= s.floor && !s.h.recs.isDead(d) {
				s.h.offer(score, d)
				if s.h.floor() != s.floor {
					s.raiseFloor()
				}
			}
		}
		b.held[wi] = 0
	}
}

// addTermScores adds cursor c's products to the batch's scores of the
// slots of groups that hold its term. A dense term skips the groups whose
// maximum is zero (no posting there, or only zero weights, which add
// nothing to a positive score) and finds each group's postings from its
// posting index, independently of the previous group.
func (s *pruneSearch) addTermScores(c *pruneCursor, groups []int) {
	b := &s.win.batch
	for k, g := range groups {
		if c.groups != nil {
			if g >= len(c.groups) || c.groups[g] == 0 {
				continue
			}
			c.pos = 0
		}
		base := uint32(g * groupSlots)
		s.visited += c.advance(base)
		p := c.postings[c.pos:]
		j := 0
		for ; j < len(p) && p[j].slot < base+groupSlots; j++ {
			off := k*groupSlots + int(p[j].slot-base)
			b.score[off] += c.weight * p[j].weight
			b.held[off/64] |= 1 << (off % 64)
		}
		c.pos += j
		s.visited += j
	}
}

// touch reads, for every group of groups where the dense term c may have
// a posting, the posting advanceDense will guess first there, and returns
// the exclusive or of their slots. Those loads depend on nothing but the
// term's posting index and branch on nothing they read, so the processor
// has many of their cache misses in flight at once; scoring then finds the
// postings in cache. (A search that branches on each posting it reads
// overlaps few: a mispredicted branch discards the loads issued past it.)
func (c *pruneCursor) touch(groups []int) uint32 {
	var x uint32
	for _, g := range groups {
		if g >= len(c.groups) || c.groups[g] == 0 {
			continue
		}
		if i := c.guessDense(uint32(g * groupSlots)); i < len(c.postings) {
			x ^= c.postings[i].slot
		}
	}
	return x
}
