package embedded

import "math"

// blockSize is how many consecutive postings of a list share one stored
// maximum weight. 128 keeps the maxima at 1/64 of the postings' memory while
// letting a search skip a frequent term's postings 128 at a time.
const blockSize = 128

// blocksOf returns how many blocks a list of n postings has.
func blocksOf(n int) int { return (n + blockSize - 1) / blockSize }

// absWeight is the magnitude of a posting weight, the quantity a block
// maximum bounds: with it the bound holds for query weights of either sign.
func absWeight(w float32) float32 { return float32(math.Abs(float64(w))) }

// appendBlockMax extends the block maxima of a list that just grew to n
// postings, the last of weight w.
func appendBlockMax(maxima []float32, n int, w float32) []float32 {
	a := absWeight(w)
	if (n-1)%blockSize == 0 {
		return append(maxima, a)
	}
	last := &maxima[len(maxima)-1]
	*last = max(*last, a)
	return maxima
}

// blockMaxima returns the maximum weight magnitude of each block of list.
func blockMaxima(list []posting) []float32 {
	out := make([]float32, 0, blocksOf(len(list)))
	for i, p := range list {
		out = appendBlockMax(out, i+1, p.weight)
	}
	return out
}

// rebuildBlockMaxima computes the block maxima of every list, for an index
// decoded from a file that predates them.
func (x *invertedIndex) rebuildBlockMaxima() {
	x.blockMax = make([][]float32, len(x.lists))
	for li, list := range x.lists {
		x.blockMax[li] = blockMaxima(list)
	}
}

// totalBlocks returns how many blocks the lists of the given lengths have.
func totalBlocks(counts []uint32) uint64 {
	var n uint64
	for _, c := range counts {
		n += uint64(blocksOf(int(c)))
	}
	return n
}

// checkBlockMaxima reports whether maxima are exactly the block maxima of
// list, so that a file whose stored maxima disagree with its postings (and
// could therefore prune a true result) is refused.
func checkBlockMaxima(list []posting, maxima []float32) bool {
	if len(maxima) != blocksOf(len(list)) {
		return false
	}
	for b, m := range maxima {
		block := list[b*blockSize : min((b+1)*blockSize, len(list))]
		got := float32(0)
		for _, p := range block {
			got = max(got, absWeight(p.weight))
		}
		if math.Float32bits(got) != math.Float32bits(m) {
			return false
		}
	}
	return true
}
