package embed

import "hash/maphash"

// localStems is a small direct-mapped table of word -> term in front of the
// shared stem cache, owned by one goroutine (inside an AnalysisScratch), so
// it needs no atomics. A slot keeps a word of up to len(localStem.word)
// bytes inline beside its term: a hit reads one cache line, where the
// shared cache reads its table and then the entry.
type localStems struct {
	seed  maphash.Seed
	slots []localStem
}

// localStem is one slot: a word of n bytes and its term; n == 0 is empty.
type localStem struct {
	term string
	n    uint8
	word [47]byte
}

// localStemSlots is the number of slots of a localStems (64 bytes each, 2
// MiB in all: against 512 KiB, it holds enough of a large vocabulary to
// analyse the build benchmark's corpus 15% faster).
const localStemSlots = 1 << 15

// term returns the term of word, as stemCache.term does.
func (l *localStems) term(word []byte) string {
	if len(word) > len(localStem{}.word) {
		return defaultStems.term(word)
	}
	if l.slots == nil {
		l.seed, l.slots = maphash.MakeSeed(), make([]localStem, localStemSlots)
	}
	s := &l.slots[maphash.Bytes(l.seed, word)&(localStemSlots-1)]
	if int(s.n) == len(word) && string(s.word[:s.n]) == string(word) {
		return s.term
	}
	s.term = defaultStems.term(word)
	s.n = uint8(copy(s.word[:], word))
	return s.term
}
