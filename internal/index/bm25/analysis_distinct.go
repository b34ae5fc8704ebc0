package bm25

// distinctTerms finds each token of one text among the text's distinct
// terms: an open-addressing table of indices into them, at most half full,
// sized for the text and cleared for each one. It does what a map from
// term to index does for AnalyzeCounts, with one probe sequence per token
// and no allocation once it has grown: with a map cleared for each text
// instead, parentrag local index took 14% more CPU with
// --child-index segments and 7% more with the embedded index (100 MB of
// the synthetic corpus, one core, three runs each side by side).
type distinctTerms struct {
	slots []distinctSlot
}

// distinctSlot is one slot of a distinctTerms: the high half of its term's
// hash, so that a token meeting another term's slot is told apart without
// comparing their bytes, and 1 + the term's index (0 is an empty slot).
type distinctSlot struct {
	hash  uint32
	index int32
}

// reset empties the table for a text of the given number of tokens.
func (d *distinctTerms) reset(tokens int) {
	size := 16
	for size < 2*tokens {
		size <<= 1
	}
	if cap(d.slots) < size {
		d.slots = make([]distinctSlot, size)
		return
	}
	d.slots = d.slots[:size]
	clear(d.slots)
}

// index returns the index of t, whose hash is hash (equal terms must have
// equal hashes), in distinct, the terms found so far, and true; or, for a
// new term, records it at index len(distinct) and returns that and false.
func (d *distinctTerms) index(t string, hash uint64, distinct []string) (int, bool) {
	mask := uint64(len(d.slots) - 1)
	high := uint32(hash >> 32)
	for h := hash & mask; ; h = (h + 1) & mask {
		switch s := d.slots[h]; {
		case s.index == 0:
			d.slots[h] = distinctSlot{hash: high, index: int32(len(distinct) + 1)}
			return len(distinct), false
		case s.hash == high && distinct[s.index-1] == t:
			return int(s.index - 1), true
		}
	}
}
