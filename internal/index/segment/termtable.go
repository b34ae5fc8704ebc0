package segment

// termTable finds a vocabulary term in every segment that holds it
// without comparing strings: for each vocabulary id, the segments holding
// the term, in order, and the term's index in each.
type termTable struct {
	starts []uint32 // by vocabulary id: where its entries begin in at; one more for the end
	at     []termIn
}

// termIn is a term's index k in the segment seg.
type termIn struct{ seg, k uint32 }

// newTermTable returns the table of segs' terms over vocab, the
// vocabulary by id in byte order. A segment's terms are in byte order
// too, so each segment is merged with the vocabulary once; its terms
// outside the vocabulary (those only contexts hold) are left out.
func newTermTable(segs []*Segment, vocab []string) termTable {
	type found struct{ id, seg, k uint32 }
	var all []found // by segment, then by id
	starts := make([]uint32, len(vocab)+1)
	for i, seg := range segs {
		id := 0
		for k := range seg.Terms() {
			t := seg.termBytes(k)
			for id < len(vocab) && string(t) > vocab[id] {
				id++
			}
			if id < len(vocab) && string(t) == vocab[id] {
				all = append(all, found{id: uint32(id), seg: uint32(i), k: uint32(k)})
				starts[id+1]++
			}
		}
	}
	for id := range vocab {
		starts[id+1] += starts[id]
	}
	tab := termTable{starts: starts, at: make([]termIn, len(all))}
	next := append([]uint32(nil), starts[:len(vocab)]...)
	for _, f := range all { // segments in order, so each id's entries are too
		tab.at[next[f.id]] = termIn{seg: f.seg, k: f.k}
		next[f.id]++
	}
	return tab
}

// of returns where the term of vocabulary id lies, segment by segment.
func (t termTable) of(id uint32) []termIn {
	return t.at[t.starts[id]:t.starts[id+1]]
}

// bytes is what the table holds on the heap.
func (t termTable) bytes() int64 { return int64(4*len(t.starts) + 8*len(t.at)) }
