package embed

import (
	"encoding/binary"
	"hash/maphash"
)

// localStems is a small two-way set-associative table of word -> term in
// front of the shared stem cache, owned by one goroutine (inside an
// AnalysisScratch), so it needs no atomics. A slot keeps a word of up to
// len(localStem.word) bytes inline beside its term and the term's hash: a
// hit reads one or two adjacent cache lines, where the shared cache reads
// its table and then the entry. It also collects the hash of every term
// the tokenizer emits, for counting them. Every table hashes with
// termSeed, so the hashes of terms analysed by different goroutines can be
// counted together (see Tokens).
type localStems struct {
	slots  []localStem
	hashes []uint64  // the hash of each term emitted since the caller emptied it
	queue  wordQueue // ended words waiting for their terms (analyzer_lookahead.go)
}

// localStem is one slot: a word of n bytes, its term and the term's hash;
// n == 0 is empty.
type localStem struct {
	term string
	hash uint64
	n    uint8
	word [39]byte
}

// holds reports whether the slot holds word.
func (s *localStem) holds(word []byte) bool {
	return int(s.n) == len(word) && string(s.word[:s.n]) == string(word)
}

// localStemSlots is the number of slots of a localStems (64 bytes each, 2
// MiB in all: against 512 KiB, it holds enough of a large vocabulary to
// analyse the build benchmark's corpus 15% faster). They go in sets of
// localStemWays adjacent slots, the one used last first: against one slot
// a word, two halve the words the shared cache is asked for on the build
// benchmark's corpus (6.3% to 3.2% of its 20,000-word vocabulary's words).
const localStemSlots = localStemWays << localStemSetBits

// localStemWays is the number of slots of a set: the word used last and
// the one before it, which termIn swaps and shifts by name.
const localStemWays = 2

// localStemSetBits is log2 of the number of sets.
const localStemSetBits = 14

// setOf returns the set of word, a word of at most len(localStem{}.word)
// bytes: the word read eight bytes at a time and mixed by multiplication,
// its top bits taken (Fibonacci hashing), so that a word costs about one
// multiplication a word of eight bytes and no call. A table that only
// caches needs no seed: a poor spread costs time, never a wrong term.
func setOf(word []byte) uint64 {
	const mix = 0x9e3779b97f4a7c15
	h := uint64(len(word))
	for len(word) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(word)) * mix
		h ^= h >> 29
		word = word[8:]
	}
	if len(word) > 0 {
		var tail [8]byte
		copy(tail[:], word)
		h = (h ^ binary.LittleEndian.Uint64(tail[:])) * mix
		h ^= h >> 29
	}
	return (h * mix) >> (64 - localStemSetBits)
}

// ways returns the slots of set s.
func (l *localStems) ways(s uint64) *[localStemWays]localStem {
	return (*[localStemWays]localStem)(l.slots[s*localStemWays:])
}

// termSeed is the seed of every term hash.
var termSeed = maphash.MakeSeed()

// ready allocates the table on first use.
func (l *localStems) ready() {
	if l.slots == nil {
		l.slots = make([]localStem, localStemSlots)
	}
}

// hashOf returns the hash of term.
func (l *localStems) hashOf(term string) uint64 { return TermHash(term) }

// term returns the term of word, as stemCache.term does, and its hash.
func (l *localStems) term(word []byte) (string, uint64) {
	if !fitsSlot(word) {
		term := defaultStems.term(word)
		return term, l.hashOf(term)
	}
	l.ready()
	return l.termIn(setOf(word), word)
}

// fitsSlot reports whether word fits a slot of the table.
func fitsSlot(word []byte) bool { return len(word) <= len(localStem{}.word) }

// termIn is term for a word that fits a slot, whose set is given. A word
// found in the set's second slot moves to its first; a word not found
// takes the first, pushing the word there to the second.
func (l *localStems) termIn(set uint64, word []byte) (string, uint64) {
	ways := l.ways(set)
	switch {
	case ways[0].holds(word):
	case ways[1].holds(word):
		ways[0], ways[1] = ways[1], ways[0]
	default:
		ways[1] = ways[0]
		ways[0].term = defaultStems.term(word)
		ways[0].hash = TermHash(ways[0].term)
		ways[0].n = uint8(copy(ways[0].word[:], word))
	}
	return ways[0].term, ways[0].hash
}
