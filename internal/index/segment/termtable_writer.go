package segment

import "github.com/parentrag/parentrag/internal/index/bm25"

// writerTerms finds a writer's terms by the hash bm25.TermHash gives
// them: an open-addressing table of indices into the writer's names, at
// most half full. Analyses carry their terms' hashes, so a term added
// again costs a probe and one comparison, and no hashing.
type writerTerms struct {
	slots []writerSlot
	n     int
}

// writerSlot is one term of the table: its hash, 1 + its index (0 is an
// empty slot) and the term as it was first given. Analyses take their
// terms from the process's stem cache, so a term mostly comes again as
// the same string, and comparing it reads the slot and none of the term's
// bytes (a string equal to another at the same address is equal at once).
type writerSlot struct {
	term  string
	hash  uint64
	index uint32
}

// find returns the index of term t, whose hash is hash, and true; or
// false and the slot where it would go.
func (t *writerTerms) find(term string, hash uint64) (int, bool) {
	if len(t.slots) == 0 {
		t.slots = make([]writerSlot, 1024)
	}
	mask := uint64(len(t.slots) - 1)
	for i := hash & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.index == 0 {
			return int(i), false
		}
		if s.hash == hash && s.term == term {
			return int(s.index - 1), true
		}
	}
}

// reset empties the table, keeping its memory and none of its terms'.
func (t *writerTerms) reset() {
	clear(t.slots)
	t.n = 0
}

// insert records that term, of this hash, is names[index], at the slot
// find returned for it.
func (t *writerTerms) insert(slot int, term string, hash uint64, index int) {
	t.slots[slot] = writerSlot{term: term, hash: hash, index: uint32(index + 1)}
	if t.n++; 2*t.n > len(t.slots) {
		t.grow()
	}
}

// grow doubles the table, placing every term again.
func (t *writerTerms) grow() {
	old := t.slots
	t.slots = make([]writerSlot, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.index == 0 {
			continue
		}
		i := s.hash & mask
		for t.slots[i].index != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// hashOf returns the hash of a's i-th term: the one it carries, or one
// computed.
func hashOf(a *bm25.Analysis, i int) uint64 {
	if len(a.Hashes) == len(a.Terms) {
		return a.Hashes[i]
	}
	return bm25.TermHash(a.Terms[i])
}

// recentTerms holds the terms of the last parent's context with their
// indices, in a table small enough to stay in the processor's nearest
// cache. A parent's children hold words of its text, so most of their
// terms are found there rather than in the writer's whole table; and
// since a parent's analyses share the strings of its tokens, two equal
// terms compare without reading their bytes.
type recentTerms struct {
	slots []recentSlot
	stamp uint32 // a slot of another stamp is empty
}

// recentSlot is one term of a recentTerms.
type recentSlot struct {
	term  string
	hash  uint64
	index uint32
	stamp uint32
}

// reset empties the table and sizes it for n terms.
func (r *recentTerms) reset(n int) {
	size := 256
	for size < 2*n {
		size <<= 1
	}
	if r.stamp++; len(r.slots) < size || r.stamp == 0 {
		r.slots, r.stamp = make([]recentSlot, size), 1
	}
}

// forget empties the table, keeping its memory.
func (r *recentTerms) forget() {
	if r.stamp++; r.stamp == 0 {
		clear(r.slots)
		r.stamp = 1
	}
}

// put records that term, of this hash, has the index k.
func (r *recentTerms) put(term string, hash uint64, k int) {
	mask := uint64(len(r.slots) - 1)
	i := hash & mask
	for r.slots[i].stamp == r.stamp {
		if r.slots[i].hash == hash && r.slots[i].term == term {
			return
		}
		i = (i + 1) & mask
	}
	r.slots[i] = recentSlot{term: term, hash: hash, index: uint32(k), stamp: r.stamp}
}

// get returns the index of term, of this hash, and true when the table
// holds it.
func (r *recentTerms) get(term string, hash uint64) (int, bool) {
	if len(r.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(r.slots) - 1)
	for i := hash & mask; r.slots[i].stamp == r.stamp; i = (i + 1) & mask {
		if r.slots[i].hash == hash && r.slots[i].term == term {
			return int(r.slots[i].index), true
		}
	}
	return 0, false
}
