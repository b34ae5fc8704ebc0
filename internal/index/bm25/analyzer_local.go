package bm25

import (
	"encoding/binary"
	"hash/maphash"
)

// localStems is a small direct-mapped table of word -> term in front of
// the shared stem cache, owned by one goroutine (inside an
// AnalysisScratch), so it needs no atomics. A slot keeps a word of up to
// len(localStem.word) bytes inline beside its term and the term's hash: a
// hit reads one cache line, where the shared cache reads its table and
// then the entry. It also collects the hash of every term
// the tokenizer emits, for counting them. Every table hashes with
// termSeed, so the hashes of terms analysed by different goroutines can be
// counted together (see Tokens).
type localStems struct {
	slots  []localStem
	hashes []uint64 // the hash of each term emitted since the caller emptied it
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
// analyse the build benchmark's corpus 15% faster).
const localStemSlots = 1 << localStemBits

// localStemBits is log2 of the number of slots.
const localStemBits = 15

// slotOf returns the slot of word, a word of at most len(localStem{}.word)
// bytes: the word read eight bytes at a time and mixed by multiplication,
// its top bits taken (Fibonacci hashing), so that a word costs about one
// multiplication a word of eight bytes and no call. A table that only
// caches needs no seed: a poor spread costs time, never a wrong term.
func slotOf(word []byte) uint64 {
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
	return (h * mix) >> (64 - localStemBits)
}

// termSeed is the seed of every term hash.
var termSeed = maphash.MakeSeed()

// termHash returns the hash of term under termSeed: the same for equal
// terms within one process, whichever scratch analysed them.
func termHash(term string) uint64 { return maphash.String(termSeed, term) }

// ready allocates the table on first use.
func (l *localStems) ready() {
	if l.slots == nil {
		l.slots = make([]localStem, localStemSlots)
	}
}

// hashOf returns the hash of term.
func (l *localStems) hashOf(term string) uint64 { return termHash(term) }

// term returns the term of word, as stemCache.term does, and its hash.
func (l *localStems) term(word []byte) (string, uint64) {
	if !fitsSlot(word) {
		term := defaultStems.term(word)
		return term, l.hashOf(term)
	}
	l.ready()
	s := &l.slots[slotOf(word)]
	if !s.holds(word) {
		s.term = defaultStems.term(word)
		s.hash = termHash(s.term)
		s.n = uint8(copy(s.word[:], word))
	}
	return s.term, s.hash
}

// fitsSlot reports whether word fits a slot of the table.
func fitsSlot(word []byte) bool { return len(word) <= len(localStem{}.word) }

// emit appends the term of word, which ended at offset at (number: it
// holds a digit, and is its own term), to dst, its hash to l.hashes and
// where it ended to ends (when not nil), unless it is a stop word, and
// returns the extended dst.
func (l *localStems) emit(dst []string, word []byte, number bool, at int, ends *[]int) []string {
	var term string
	var hash uint64
	if number {
		term = string(word)
		hash = l.hashOf(term)
	} else if term, hash = l.term(word); term == "" {
		return dst
	}
	l.hashes = append(l.hashes, hash)
	if ends != nil {
		*ends = append(*ends, at)
	}
	return append(dst, term)
}
