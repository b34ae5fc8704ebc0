package embedded

import (
	"math"
	"math/bits"

	"github.com/parentrag/parentrag/internal/index/maxima"
)

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
// The terms are taken largest bound first, and before each term the
// groups that can no longer reach the floor are dropped: a slot's bound is
// then the magnitudes of the products it got so far plus the bounds of the
// terms still to come in its group (a dense term's group maximum, another
// term's largest weight, times the query weight's magnitude). A group's
// bound adds each term's best weight over its four slots, which are
// rarely one slot's; once its heaviest terms' actual weights are known,
// most groups fall below the floor, and their other terms' postings are
// never read (at 1M children, over half of the terms' looks at a group for
// the slowest questions).
//
// Exactness: each slot's products are kept per term and summed at the end
// of the batch in increasing query-term order, starting from zero, exactly
// as offer sums them (adding zero for a term the slot lacks changes no
// sum: a running sum that starts at +0 is never -0); the slots are then
// offered as offer does (positive, at or above the floor, live), so the
// top k, scores and ties are the exhaustive scan's. A group is dropped
// only when every slot's bound, a float64 sum of non-negative terms, fails
// cannotReach, the test with the rounding allowance of a float32 sum that
// windowed search applies to its candidates.

// batchGroups is the most groups scoreBatch scores at once: enough for
// many cache misses to overlap, few enough that the floor the sweep
// compares with is rarely more than a batch out of date.
const batchGroups = 256

// batchSlots is how many slots a batch of groups spans.
const batchSlots = batchGroups * groupSlots

// groupBatch is the scratch of scoreBatch; products, sofar and held are
// clean (all zero) between batches.
type groupBatch struct {
	products []float32               // term i's product at offset o of the batch, at i*batchSlots+o
	rest     []float64               // bound on the terms from the j-th to score on, for group k, at j*batchGroups+k
	sofar    [batchSlots]float64     // the magnitudes of the products at each offset, summed
	held     [batchSlots / 64]uint64 // offsets holding at least one query term
	dropped  [batchGroups / 64]uint64
	live     [batchGroups]int // the positions in the batch of the groups still scored
	group    [batchGroups]int // the batch's groups, increasing
	touched  uint32           // what touch read, kept so that its loads are not dropped
}

// ensure makes room for a query of the given number of terms.
func (b *groupBatch) ensure(terms int) {
	if len(b.products) < terms*batchSlots {
		b.products = make([]float32, terms*batchSlots)
		b.rest = make([]float64, (terms+1)*batchGroups)
	}
}

// scoreBatch scores every record of the groups in groups (in increasing
// order, at most batchGroups) that may still reach the floor and offers
// each live one with its exact score. Cursors of terms without group
// maxima move forward, so a batch starts at or after where the previous
// one ended, or after a rewind.
func (s *pruneSearch) scoreBatch(groups []int) {
	b := &s.win.batch
	b.ensure(len(s.cur))
	s.restBounds(groups)
	live := b.live[:len(groups)]
	for k := range live {
		live[k] = k
	}
	for j := range s.byBound {
		i := s.byBound[len(s.byBound)-1-j] // largest bound first
		if j > 0 {
			live = s.stillReaching(live, b.rest[j*batchGroups:])
		}
		c := &s.cur[i]
		if c.starts != nil {
			b.touched ^= c.touch(groups, live)
		}
		s.addTermProducts(i, groups, live)
	}
	s.offerBatch(groups)
}

// restBounds fills the batch's rest: for every group k of groups and
// every j, the sum of the bounds of the terms from the j-th largest bound
// on over group k, summed from the smallest up (a float64 sum of
// non-negative terms).
func (s *pruneSearch) restBounds(groups []int) {
	b := &s.win.batch
	n := len(s.byBound)
	clear(b.rest[n*batchGroups : n*batchGroups+len(groups)])
	for j := n - 1; j >= 0; j-- {
		c := &s.cur[s.byBound[n-1-j]]
		row, next := b.rest[j*batchGroups:j*batchGroups+len(groups)], b.rest[(j+1)*batchGroups:]
		for k, g := range groups {
			row[k] = next[k] + c.groupBound(g)
		}
	}
}

// groupBound returns the bound on the term's contribution to any slot of
// group g: its group maximum there times the query weight's magnitude for
// a dense term, its bound over the whole list otherwise.
func (c *pruneCursor) groupBound(g int) float64 {
	if c.groups == nil {
		return c.bound
	}
	if g >= len(c.groups) {
		return 0
	}
	return c.absQ * float64(maxima.Decoded(c.groups[g], c.unit))
}

// stillReaching returns the groups of live (positions in the batch) some
// slot of which may still reach the floor, given rest[k], the bound on the
// terms still to score over the group at position k, and marks the others
// dropped.
func (s *pruneSearch) stillReaching(live []int, rest []float64) []int {
	b := &s.win.batch
	kept := live[:0]
	for _, k := range live {
		r, o := rest[k], k*groupSlots
		if s.cannotReach(b.sofar[o]+r) && s.cannotReach(b.sofar[o+1]+r) &&
			s.cannotReach(b.sofar[o+2]+r) && s.cannotReach(b.sofar[o+3]+r) {
			b.dropped[k/64] |= 1 << (k % 64)
			continue
		}
		kept = append(kept, k)
	}
	return kept
}

// addTermProducts keeps term i's products at the batch's offsets of the
// slots of the groups at positions live (increasing) that hold its term.
// A dense term skips the groups whose maximum is zero (no posting there,
// or only zero weights, which add nothing to a positive score) and finds
// each group's postings from its posting index, independently of the
// previous group.
func (s *pruneSearch) addTermProducts(i int, groups, live []int) {
	b := &s.win.batch
	c := &s.cur[i]
	products := b.products[i*batchSlots : (i+1)*batchSlots]
	for _, k := range live {
		g := groups[k]
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
			x := c.weight * p[j].weight
			products[off] = x
			b.sofar[off] += math.Abs(float64(x))
			b.held[off/64] |= 1 << (off % 64)
		}
		c.pos += j
		s.visited += j
	}
}

// offerBatch sums the products of every slot of the batch's groups that
// holds a query term, in increasing term order, and offers those of the
// groups not dropped; it leaves the batch's scratch clean.
func (s *pruneSearch) offerBatch(groups []int) {
	b := &s.win.batch
	n := len(s.cur)
	for wi, word := range b.held[:(len(groups)*groupSlots+63)/64] {
		for ; word != 0; word &= word - 1 {
			off := wi*64 + bits.TrailingZeros64(word)
			var score float32
			for i := range n {
				score += b.products[i*batchSlots+off]
				b.products[i*batchSlots+off] = 0
			}
			b.sofar[off] = 0
			k := off / groupSlots
			if b.dropped[k/64]&(1<<(k%64)) != 0 {
				continue
			}
			d := uint32(groups[k]*groupSlots + off%groupSlots)
			if score > 0 && score >= s.floor && !s.h.recs.isDead(d) {
				s.h.offer(score, d)
				if s.h.floor() != s.floor {
					s.raiseFloor()
				}
			}
		}
		b.held[wi] = 0
	}
	clear(b.dropped[:])
}

// touch reads, for every group at positions live of groups where the
// dense term c may have a posting, the posting advanceDense will guess
// first there, and returns the exclusive or of their slots. Those loads
// depend on nothing but the term's posting index and branch on nothing
// they read, so the processor has many of their cache misses in flight at
// once; scoring then finds the postings in cache. (A search that branches
// on each posting it reads overlaps few: a mispredicted branch discards
// the loads issued past it.)
func (c *pruneCursor) touch(groups, live []int) uint32 {
	var x uint32
	for _, k := range live {
		g := groups[k]
		if g >= len(c.groups) || c.groups[g] == 0 {
			continue
		}
		if i := c.guessDense(uint32(g * groupSlots)); i < len(c.postings) {
			x ^= c.postings[i].slot
		}
	}
	return x
}
