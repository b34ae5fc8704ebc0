package bm25

// AnalysisArena hands out the arrays of analyses from blocks shared by
// many of them, so that analysing a text allocates once per few hundred
// texts instead of three times per text. Until Reset, it never hands out
// the same memory twice: an analysis keeps its arrays for as long as it
// is held. A build done with a batch of analyses (a segment writer that
// has added them) resets their arena, and the next batch fills the same
// blocks. The zero value is ready.
type AnalysisArena struct {
	blocks []arenaBlock // blocks[:used] hold analyses; the rest are empty
	used   int
}

// arenaBlock is one block of an AnalysisArena: what its arrays hold is
// handed out, their room is free.
type arenaBlock struct {
	terms  []string
	counts []uint32
}

// arenaBlockTerms is how many terms a block holds, or more for a larger
// analysis.
const arenaBlockTerms = 4096

// Reset makes the arena's memory free for new analyses: no analysis taken
// from it may be used after.
func (a *AnalysisArena) Reset() {
	for i := range a.blocks[:a.used] {
		b := &a.blocks[i]
		clear(b.terms) // holds no term's memory alive
		b.terms, b.counts = b.terms[:0], b.counts[:0]
	}
	a.used = 0
}

// room returns empty arrays, neither nil, with room for the n terms of
// the next analysis, which took then says how many it kept: the room of
// the last block used, or of the next.
func (a *AnalysisArena) room(n int) ([]string, []uint32) {
	if a.used == 0 || !a.blocks[a.used-1].fits(n) {
		a.next(n)
	}
	b := &a.blocks[a.used-1]
	return b.terms[len(b.terms):len(b.terms)], b.counts[len(b.counts):len(b.counts)]
}

// took hands out the first n terms of the room last returned, and no
// more than n: an analysis cannot grow into its neighbour's.
func (a *AnalysisArena) took(n int) {
	b := &a.blocks[a.used-1]
	end := len(b.terms) + n
	b.terms, b.counts = b.terms[:end], b.counts[:end]
}

// letGo forgets the blocks before the last used, for an arena never
// reset: their memory is their analyses' alone, and goes with them.
func (a *AnalysisArena) letGo() {
	if a.used > 1 {
		last := a.blocks[a.used-1]
		clear(a.blocks)
		a.blocks, a.used = append(a.blocks[:0], last), 1
	}
}

// fits reports whether the block has room for n more terms.
func (b *arenaBlock) fits(n int) bool { return cap(b.terms)-len(b.terms) >= n }

// next moves on to a block with room for n terms: the next empty one, or
// one made in its place when it is too small or there is none.
func (a *AnalysisArena) next(n int) {
	if a.used == len(a.blocks) {
		a.blocks = append(a.blocks, arenaBlock{})
	}
	if b := &a.blocks[a.used]; b.terms == nil || !b.fits(n) {
		size := max(n, arenaBlockTerms)
		*b = arenaBlock{terms: make([]string, 0, size), counts: make([]uint32, 0, size)}
	}
	a.used++
}
