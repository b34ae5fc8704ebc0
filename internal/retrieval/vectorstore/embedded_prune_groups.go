package vectorstore

import "math"

// Slot-group maxima bound a dense term's weights over fixed runs of slots.
//
// Block maxima (blockMax) follow a list's postings, 128 at a time, so a
// term held by nearly every record gets one bound per ~128 records: among
// that many, one almost always holds the term at close to its largest
// weight, and the bound rules nothing out. Group maxima follow the slots
// instead: groupMax[li][g] bounds the weight magnitudes of list li's
// postings in slots g*groupSlots to (g+1)*groupSlots-1 (zero when it has
// none there). Because every dense term's groups cover the same slots, the
// bounds of all query terms over one group add up to a bound on the score
// of every record in it; for a query of frequent words only, that rules out
// all but a few percent of the groups (see embedded_prune_grouped.go).
//
// Only dense lists keep them: a list gets group maxima once it holds at
// least one posting per 16 slots it spans (denseEnough) and loses them
// when it falls under one per 32 (tooSparse). A posting takes 8 bytes and
// a group maximum 2, so the maxima of a list at one posting per 16 slots
// take as much memory as its postings (at most twice as much before it
// loses them), and for a term in most records about 6%. Keeping them down
// to that density pays for the frequent terms just under one posting per
// 8 slots, which grouped search would otherwise bound by reading all
// their postings. The maxima are stored as bfloat16
// rounded up (the top 16 bits of the float32, incremented when any lower
// bit is set), which keeps them at most 0.4% above the float32 maximum and
// never below it.

// groupSlots is how many consecutive slots share one group maximum.
const groupSlots = 4

// groupOf returns the group holding slot.
func groupOf(slot uint32) int { return int(slot / groupSlots) }

// groupsSpanned is how many groups a list whose last posting is at slot
// spans from slot 0.
func groupsSpanned(slot uint32) int { return groupOf(slot) + 1 }

// denseEnough reports whether a list of n postings, the last at slot,
// should keep group maxima: it holds at least one posting per four groups
// (one per 16 slots).
func denseEnough(n int, last uint32) bool { return 4*n >= groupsSpanned(last) }

// tooSparse reports whether a list keeping group maxima should drop them:
// it holds fewer than one posting per eight groups. Between the two thresholds a list
// keeps what it has, so a list's maxima are rebuilt only after its
// postings at least double.
func tooSparse(n int, last uint32) bool { return 8*n < groupsSpanned(last) }

// bf16Ceil rounds a non-negative float32 up to the nearest bfloat16 (the
// top 16 bits of a float32); the smallest value at or above m that a
// bfloat16 holds, +Inf for values beyond the largest finite one.
func bf16Ceil(m float32) uint16 {
	b := math.Float32bits(m)
	hi := uint16(b >> 16)
	if b&0xffff != 0 {
		hi++
	}
	return hi
}

// bf16 widens a bfloat16 back to float32, exactly.
func bf16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// startSlots is how many consecutive slots share one stored posting
// index in a dense list: a cursor jumps to the run of startSlots slots
// holding the slot it seeks and searches only that run's postings.
const startSlots = 256

// groupIndex is what a dense list keeps beside its postings: its group
// maxima, and for every run of startSlots slots the index of its first
// posting at or after the run's first slot. The zero value is a list that
// keeps nothing.
type groupIndex struct {
	max    []uint16 // max[g] bounds the weights in slots of group g, as bfloat16
	starts []uint32 // starts[r]: first posting at or after slot r*startSlots
}

// follow extends gi for posting i of a list, p, appended after every
// posting of a lower slot.
func (gi *groupIndex) follow(i int, p posting) {
	g := groupOf(p.slot)
	for len(gi.max) <= g {
		gi.max = append(gi.max, 0)
	}
	gi.max[g] = max(gi.max[g], bf16Ceil(absWeight(p.weight)))
	for len(gi.starts) <= int(p.slot/startSlots) {
		gi.starts = append(gi.starts, uint32(i))
	}
}

// newGroupIndex returns the group index of list, in one pass over it.
func newGroupIndex(list []posting) groupIndex {
	if len(list) == 0 {
		return groupIndex{}
	}
	last := list[len(list)-1].slot
	gi := groupIndex{max: make([]uint16, groupsSpanned(last)), starts: make([]uint32, last/startSlots+1)}
	r := 0
	for i, p := range list {
		g := groupOf(p.slot)
		gi.max[g] = max(gi.max[g], bf16Ceil(absWeight(p.weight)))
		for ; r <= int(p.slot/startSlots); r++ {
			gi.starts[r] = uint32(i)
		}
	}
	return gi
}

// freshGroupIndex returns list's group index when it is dense enough to
// keep one, the zero value otherwise: what a list built in one go (a load
// or a compaction) holds.
func freshGroupIndex(list []posting) groupIndex {
	if len(list) == 0 || !denseEnough(len(list), list[len(list)-1].slot) {
		return groupIndex{}
	}
	return newGroupIndex(list)
}

// followGroups updates list li's group index after a posting was appended
// to it: the new posting extends it, and the list gains or loses it as its
// density crosses the thresholds.
func (x *invertedIndex) followGroups(li uint32) {
	list := x.lists[li]
	last := list[len(list)-1]
	switch gi := &x.groups[li]; {
	case gi.max != nil && tooSparse(len(list), last.slot):
		*gi = groupIndex{}
	case gi.max != nil:
		gi.follow(len(list)-1, last)
	case denseEnough(len(list), last.slot):
		*gi = newGroupIndex(list)
	}
}

// rebuildGroups computes the group index of every list dense enough to
// keep one and every list's largest weight, for an index just decoded
// from a file.
func (x *invertedIndex) rebuildGroups() {
	x.groups = make([]groupIndex, len(x.lists))
	x.tops = make([]float32, len(x.lists))
	for li, list := range x.lists {
		x.groups[li] = freshGroupIndex(list)
		x.tops[li] = largest(x.blockMax[li])
	}
}

// largest returns the largest of maxima, 0 when there is none.
func largest(maxima []float32) float32 {
	m := float32(0)
	for _, v := range maxima {
		m = max(m, v)
	}
	return m
}
