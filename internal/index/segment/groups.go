package segment

import "math"

// childGroups is how many groups a parent's children fall in for
// groupsReach: one child each when the parent has at most that many,
// runs of neighbouring children when it has more.
const childGroups = 8

// childGroup returns the group of the i-th of a parent's n children.
func childGroup(i, n uint32) uint32 {
	if n <= childGroups {
		return i
	}
	return uint32(uint64(i) * childGroups / uint64(n))
}

// heldBy returns the groups of children, one bit each, that the j-th
// posting of pl has child postings for in cl.
func (s *Segment) heldBy(pl parentList, j int, cl childList) uint8 {
	p := pl.parent(j)
	first, n := s.parentFirst[p], s.parentFirst[p+1]-s.parentFirst[p]
	lo, hi := pl.childSpan(j, cl.len())
	var groups uint8
	for i := lo; i < hi; i++ {
		groups |= 1 << childGroup(cl.slot(i)-first, n)
	}
	return groups
}

// withGroups returns the smallest float32 of at least bound whose lowest
// 8 bits are groups: a bound that carries the groups of children holding
// its term, looser by less than 2⁻¹⁵ of itself when it is a normal float
// (a BM25 weight is), so that groupsReach reads both in one place. bound
// must be finite and not negative.
func withGroups(bound float32, groups uint8) float32 {
	bits := math.Float32bits(bound)
	if bits&0xFF > uint32(groups) {
		bits += 0x100
	}
	return math.Float32frombits(bits&^0xFF | uint32(groups))
}

// groupsOf returns the groups withGroups put in bound.
func groupsOf(bound float32) uint8 { return uint8(math.Float32bits(bound)) }

// groupsReach reports whether some group of p's children could score
// floor or more, from here, the query terms' postings at p: a child
// of a group holding a term weighs at most the term's posting bound, and
// a child of a group not holding it weighs exactly its context's weight
// for it (nothing when the context lacks it too). The sums are widened
// as sweep widens a parent's bound. A parent whose bound reaches floor
// often has no group that does: the bound adds up each term's best child,
// and different children hold different terms.
func (m *search) groupsReach(p parentAt, here []termAt, floor float64) bool {
	if math.IsInf(floor, -1) {
		return true
	}
	groups := min(p.children, childGroups)
	var sums [childGroups]float64
	for i := range here {
		h := &here[i]
		bound, context := float64(h.t.qw*h.bound), 0.0
		if h.context > 0 {
			context = float64(h.t.qw * m.w.contextAt(h.context, p.contextNorm))
		}
		held := groupsOf(h.bound)
		for g := range groups {
			if held&(1<<g) != 0 {
				sums[g] += bound
			} else {
				sums[g] += context
			}
		}
	}
	for _, sum := range sums[:groups] {
		if sum*m.slack >= floor {
			return true
		}
	}
	return false
}
