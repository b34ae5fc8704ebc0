package bm25

import (
	"sort"
	"unicode/utf8"
)

// Tokens is one text analysed term by term, kept so that stretches of it,
// and texts joined from such stretches, are counted (see CountTokens)
// without tokenising their words again: a parent's text is tokenised once
// for its context and for every child cut from it.
type Tokens struct {
	text   string
	terms  []string
	hashes []uint64 // each term's termHash
	ends   []int    // where each term's word ended (see appendAnalyzed), off bytes before text
	off    int
}

// Tokenize analyses text as AnalyzeCounts does and keeps its terms in
// text order. The result holds no memory of s.
func (s *AnalysisScratch) Tokenize(text string) Tokens {
	return s.TokenizeInto(Tokens{}, text)
}

// TokenizeScratch is Tokenize into memory of s, which the next call
// reuses: the tokens are valid until then.
func (s *AnalysisScratch) TokenizeScratch(text string) Tokens {
	s.tokens = s.TokenizeInto(s.tokens, text)
	return s.tokens
}

// TokenizeInto is Tokenize reusing the memory of dst, whose tokens it
// overwrites.
func (s *AnalysisScratch) TokenizeInto(dst Tokens, text string) Tokens {
	t := Tokens{text: text, hashes: dst.hashes[:0], ends: dst.ends[:0]}
	t.terms = appendAnalyzed(dst.terms[:0], text, &t.hashes, &t.ends)
	return t
}

// Span returns the tokens of text[start:end], a stretch given in bytes,
// and true, when the stretch's analysis is the terms of t between its
// ends: when start and end are rune boundaries, text[start-1] is no part
// of a word nor a joiner (the start of text, white space, most
// punctuation) and neither is text[end] (or end is the end of text).
// Otherwise it returns false, and the stretch must be analysed alone.
func (t Tokens) Span(start, end int) (Tokens, bool) {
	if start < 0 || end > len(t.text) || start > end || !separatedBefore(t.text, start) || !separatedAt(t.text, end) {
		return Tokens{}, false
	}
	// A word before the stretch ended at a separator before start, one
	// inside it at end or before, one after it past end; an ideograph's
	// term ends where its rune starts, at start or after when inside.
	first := sort.SearchInts(t.ends, t.off+start)
	last := first + sort.Search(len(t.ends)-first, func(k int) bool { return t.ends[first+k] > t.off+end })
	return Tokens{text: t.text[start:end], terms: t.terms[first:last], hashes: t.hashes[first:last], ends: t.ends[first:last], off: t.off + start}, true
}

// separatedBefore reports whether the text before offset i ends in a
// separator, or is empty, and i is a rune boundary.
func separatedBefore(text string, i int) bool {
	if i == 0 {
		return true
	}
	if i < len(text) && !utf8.RuneStart(text[i]) {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return r != utf8.RuneError && classify(r) == kindSeparator
}

// separatedAt reports whether offset i is the end of text or the start
// of a separator rune.
func separatedAt(text string, i int) bool {
	if i == len(text) {
		return true
	}
	if !utf8.RuneStart(text[i]) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return r != utf8.RuneError && classify(r) == kindSeparator
}

// CountTokens returns the analysis of the texts of parts joined by
// separators ("\n\n", say), exactly what AnalyzeCounts returns for the
// joined text: a separator ends every word before it and starts none.
func (s *AnalysisScratch) CountTokens(parts ...Tokens) Analysis {
	return s.countTokens(parts...)
}
