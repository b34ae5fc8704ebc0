package bm25

import (
	"hash/maphash"
	"runtime"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/kljensen/snowball/english"
)

// AnalyzerName identifies the lexical analysis implemented by Analyze. It is
// recorded in serialised BM25 statistics, and must change whenever Analyze
// can produce different terms for the same text, so that statistics built by
// an older analyzer are refused instead of silently mismatching.
const AnalyzerName = "english-porter2/v1"

// MaxTokenBytes is the longest token, in bytes of its lowercased UTF-8 form,
// that Analyze keeps. Longer runs of word characters (base64 blobs, unspaced
// scripts such as Thai) are dropped whole.
const MaxTokenBytes = 128

// stopWords is the English stop word set of Lucene's EnglishAnalyzer.
var stopWords = map[string]struct{}{
	"a": {}, "an": {}, "and": {}, "are": {}, "as": {}, "at": {}, "be": {},
	"but": {}, "by": {}, "for": {}, "if": {}, "in": {}, "into": {}, "is": {},
	"it": {}, "no": {}, "not": {}, "of": {}, "on": {}, "or": {}, "such": {},
	"that": {}, "the": {}, "their": {}, "then": {}, "there": {}, "these": {},
	"they": {}, "this": {}, "to": {}, "was": {}, "will": {}, "with": {},
}

// IsStopWord reports whether word, already lowercased, is one of the English
// stop words Analyze drops (Lucene's English stop set).
func IsStopWord(word string) bool {
	_, ok := stopWords[word]
	return ok
}

// Analyze turns text into index terms, in text order, repeats included:
//
//   - Words are maximal runs of Unicode letters and numbers; combining marks
//     stay with the word they follow. Everything else (whitespace,
//     punctuation, symbols, hyphens, underscores) separates words.
//   - An apostrophe (' or U+2019) between two letters stays inside the word,
//     so "don't" is one term; a trailing possessive "'s" is removed, so
//     "Alice's" yields "alice".
//   - A full stop between two digits stays inside the word, so "3.5", "v1.2"
//     and "10.0.0.1" are single terms; a comma always separates.
//   - Each Han ideograph and Hiragana character is a term of its own (as in
//     Lucene's StandardTokenizer), since those scripts do not space words.
//   - Words are lowercased (simple Unicode case mapping, so Greek final sigma
//     folds to sigma; no Unicode normalisation).
//   - Words longer than MaxTokenBytes are dropped.
//   - English stop words (see IsStopWord) are dropped.
//   - Words without any number are stemmed with the Snowball English (Porter2)
//     stemmer; words containing a number are kept as they are.
//
// Analyze is safe for concurrent use and deterministic.
func Analyze(text string) []string {
	return AppendAnalyzed(nil, text)
}

// yieldEvery is how many bytes of text AppendAnalyzed reads between two
// yields of the processor, so that analysing a long text shares a core with
// short requests at a grain of about a hundred microseconds.
const yieldEvery = 8 << 10

// AppendAnalyzed appends the terms of text, as Analyze returns them, to dst
// and returns the extended slice, so a caller can reuse one buffer.
func AppendAnalyzed(dst []string, text string) []string {
	return appendAnalyzed(dst, text, nil, nil)
}

// appendAnalyzed is AppendAnalyzed appending, to hashes when not nil,
// each term's termHash, and to ends, when not nil, where each term's word
// ended: the byte offset of the rune that ended it (len(text) for the last
// word), which is the offset of an ideograph's own rune.
func appendAnalyzed(dst []string, text string, hashes *[]uint64, ends *[]int) []string {
	t := tokenizer{hashes: hashes, ends: ends}
	nextYield := yieldEvery
	for i := 0; i < len(text); {
		if i >= nextYield {
			runtime.Gosched()
			nextYield = i + yieldEvery
		}
		if c := text[i]; c < utf8.RuneSelf {
			if k := asciiKinds[c]; k == kindLetter || k == kindNumber {
				t.addASCII(c, k) // fast path: ASCII word character
				i++
				continue
			}
		}
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		t.at = i
		i += size
		dst = t.step(dst, r, text[i:])
	}
	t.at = len(text)
	return t.flush(dst)
}

// runeKind classifies a rune for tokenisation.
type runeKind uint8

const (
	kindSeparator runeKind = iota
	kindLetter
	kindNumber
	kindMark
	kindIdeograph
	kindApostrophe
	kindPoint
)

// asciiKinds classifies every ASCII byte without a function call.
var asciiKinds = func() (t [utf8.RuneSelf]runeKind) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = kindLetter, kindLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = kindNumber
	}
	t['\''], t['.'] = kindApostrophe, kindPoint
	return t
}()

// classify returns the tokenisation kind of r.
func classify(r rune) runeKind {
	if r < utf8.RuneSelf {
		return asciiKinds[r]
	}
	switch {
	case r == '\u2019':
		return kindApostrophe
	case r >= 0x3040 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r)):
		return kindIdeograph
	case unicode.IsLetter(r):
		return kindLetter
	case unicode.IsNumber(r):
		return kindNumber
	case unicode.IsMark(r):
		return kindMark
	}
	return kindSeparator
}

// peekKind classifies the first rune of rest, or returns kindSeparator.
func peekKind(rest string) runeKind {
	if rest == "" {
		return kindSeparator
	}
	if rest[0] < utf8.RuneSelf {
		return asciiKinds[rest[0]]
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return classify(r)
}

// tokenizer accumulates the current lowercased word in a fixed buffer, so
// tokenising allocates nothing but the terms it emits.
type tokenizer struct {
	buf       [MaxTokenBytes]byte
	n         int
	overflow  bool
	hasNumber bool
	last      runeKind
	hashes    *[]uint64 // nil, or the termHash of each emitted term
	ends      *[]int    // nil, or where each emitted term's word ended
	at        int       // the offset of the rune being read
}

// step consumes rune r, followed in the text by rest, appending to dst any
// term it completes.
func (t *tokenizer) step(dst []string, r rune, rest string) []string {
	switch k := classify(r); k {
	case kindLetter, kindNumber:
		t.add(r, k)
	case kindMark:
		if t.active() {
			t.add(r, t.last)
		} else {
			dst = t.flush(dst)
		}
	case kindIdeograph:
		dst = t.flush(dst)
		t.add(r, kindLetter)
		dst = t.flush(dst)
	case kindApostrophe:
		dst = t.joinOrFlush(dst, '\'', kindLetter, rest)
	case kindPoint:
		dst = t.joinOrFlush(dst, '.', kindNumber, rest)
	default:
		dst = t.flush(dst)
	}
	return dst
}

// joinOrFlush keeps the joiner byte c inside the current word when the word
// so far and the next rune are both of kind k; otherwise it ends the word.
func (t *tokenizer) joinOrFlush(dst []string, c byte, k runeKind, rest string) []string {
	if t.active() && t.last == k && peekKind(rest) == k {
		t.addByte(c)
		t.last = kindSeparator
		return dst
	}
	return t.flush(dst)
}

// active reports whether a word is being accumulated.
func (t *tokenizer) active() bool {
	return t.n > 0 || t.overflow
}

// add appends the lowercase form of r, of kind k, to the current word.
func (t *tokenizer) add(r rune, k runeKind) {
	if r < utf8.RuneSelf {
		t.addASCII(byte(r), k)
		return
	}
	t.last = k
	if k == kindNumber {
		t.hasNumber = true
	}
	r = unicode.ToLower(unicode.ToUpper(r)) // also folds final sigma
	if t.n+utf8.RuneLen(r) > len(t.buf) {
		t.overflow = true
		return
	}
	t.n += utf8.EncodeRune(t.buf[t.n:], r)
}

// addASCII appends the lowercase form of the ASCII letter or digit c, of
// kind k, to the current word.
func (t *tokenizer) addASCII(c byte, k runeKind) {
	t.last = k
	if k == kindNumber {
		t.hasNumber = true
	} else {
		c |= 0x20 // ASCII letters only: 'A'..'Z' -> 'a'..'z'
	}
	t.addByte(c)
}

// addByte appends one ASCII byte to the current word.
func (t *tokenizer) addByte(c byte) {
	if t.n == len(t.buf) {
		t.overflow = true
		return
	}
	t.buf[t.n] = c
	t.n++
}

// flush ends the current word, appending its term to dst unless it is too
// long or a stop word, and resets the tokenizer.
func (t *tokenizer) flush(dst []string) []string {
	if !t.active() {
		return dst
	}
	if !t.overflow {
		dst = t.emit(dst, t.term())
	}
	t.n, t.overflow, t.hasNumber, t.last = 0, false, false, kindSeparator
	return dst
}

// emit appends term to dst, its termHash to t.hashes and where its word
// ended to t.ends (each when asked for), unless it is "" (a stop word).
func (t *tokenizer) emit(dst []string, term string) []string {
	if term == "" {
		return dst
	}
	if t.hashes != nil {
		*t.hashes = append(*t.hashes, termHash(term))
	}
	if t.ends != nil {
		*t.ends = append(*t.ends, t.at)
	}
	return append(dst, term)
}

// word returns the current word as its term is looked up: without a
// possessive 's, unless it holds a digit.
func (t *tokenizer) word() []byte {
	word := t.buf[:t.n]
	if t.hasNumber {
		return word
	}
	if n := len(word); n > 2 && word[n-2] == '\'' && word[n-1] == 's' {
		word = word[:n-2]
	}
	return word
}

// term returns the index term of the current word, or "" for a stop word:
// a word holding a digit is its own term.
func (t *tokenizer) term() string {
	if t.hasNumber {
		return string(t.word())
	}
	return defaultStems.term(t.word())
}

// termSeed is the seed of every term hash.
var termSeed = maphash.MakeSeed()

// termHash returns the hash of term under termSeed: the same for equal
// terms within one process, whichever goroutine analysed them, so the
// hashes of terms analysed apart can be counted together (see Tokens).
func termHash(term string) uint64 { return maphash.String(termSeed, term) }

// stemCacheSlots is the size of the stem cache; a power of two.
const stemCacheSlots = 1 << 16

// stemCache memoises word -> term (stem, or "" for stop words) in a
// two-way set-associative, lock-free table: a word lives in one of the two
// slots of the set its hash selects; a miss moves the set's first entry to
// its second slot and stores the new word first. Frequent words of a Zipfian
// vocabulary stay cached, and an eviction only costs a recomputation.
type stemCache struct {
	seed  maphash.Seed
	slots []atomic.Pointer[stemEntry]
}

// stemEntry is one immutable cached word and its term. A word of up to
// len(inline) bytes is kept inside the entry, and so is its term when
// stemming leaves it unchanged, so that a hit reads one object.
type stemEntry struct {
	word, term string
	inline     [24]byte
}

// newStemEntry returns the entry of word, computing its term.
func newStemEntry(word []byte) *stemEntry {
	e := &stemEntry{}
	if len(word) > 0 && len(word) <= len(e.inline) {
		n := copy(e.inline[:], word)
		e.word = unsafe.String(&e.inline[0], n) // never written again
	} else {
		e.word = string(word)
	}
	e.term = stemTerm(e.word)
	return e
}

// defaultStems is the process-wide stem cache used by Analyze.
var defaultStems = newStemCache()

// newStemCache returns an empty stem cache.
func newStemCache() *stemCache {
	return &stemCache{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[stemEntry], stemCacheSlots)}
}

// term returns the cached term of word, computing it on a miss.
func (c *stemCache) term(word []byte) string {
	set := c.slots[maphash.Bytes(c.seed, word)&(stemCacheSlots-2):][:2]
	for i := range set {
		if e := set[i].Load(); e != nil && e.word == string(word) {
			return e.term
		}
	}
	e := newStemEntry(word)
	set[1].Store(set[0].Load())
	set[0].Store(e)
	return e.term
}

// stemTerm returns "" for a stop word and the Porter2 stem of word otherwise,
// sharing word's memory when stemming leaves it unchanged.
func stemTerm(word string) string {
	if IsStopWord(word) {
		return ""
	}
	if stem := english.Stem(word, true); stem != word {
		return stem
	}
	return word
}
