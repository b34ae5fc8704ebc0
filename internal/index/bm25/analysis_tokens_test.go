package bm25

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// trickyPieces are the pieces of the random texts below: words, joiners
// between and around them, marks, ideographs, separators of one to three
// bytes, invalid UTF-8 and a word longer than MaxTokenBytes.
var trickyPieces = []string{
	"alice", "Alice's", "don't", "'s", "'", "’", "3.5", "v1.2", ".", "..", "10.", ",", "the", "and",
	"e\u0301", "\u0301", "漢字", "ひら", "Σίσυφος", " ", "  ", "\n", "\n\n", "\t", "—", "-", "_", "!", "?",
	"\xff", "naïve", "x2", strings.Repeat("z", MaxTokenBytes+1), "running", "runs",
}

// randomText joins n random pieces.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(trickyPieces[r.IntN(len(trickyPieces))])
	}
	return b.String()
}

// checkSpan fails unless every stretch Span accepts counts as the
// stretch analysed alone, and reports whether it accepted this one.
func checkSpan(t *testing.T, s *AnalysisScratch, text string, start, end int) bool {
	t.Helper()
	whole := s.Tokenize(text)
	span, ok := whole.Span(start, end)
	if !ok {
		return false
	}
	want := s.AnalyzeCounts(text[start:end])
	if got := s.CountTokens(span); !reflect.DeepEqual(got, want) {
		t.Fatalf("text %q [%d:%d]: counted %+v, analysed alone %+v", text, start, end, got, want)
	}
	return true
}

// TestTokensSpanCountsAsTheStretchAlone checks, on random texts of tricky
// pieces cut at every byte, that a stretch Span accepts counts exactly as
// the stretch analysed alone, and that stretches cut at white space are
// accepted.
func TestTokensSpanCountsAsTheStretchAlone(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var s AnalysisScratch
	accepted, spaced := 0, 0
	for range 300 {
		text := randomText(r, 12)
		for range 20 {
			start, end := r.IntN(len(text)+1), r.IntN(len(text)+1)
			if start > end {
				start, end = end, start
			}
			if checkSpan(t, &s, text, start, end) {
				accepted++
			}
		}
		for i := 0; i < len(text); i++ {
			if text[i] == ' ' {
				spaced++
				if !checkSpan(t, &s, text, 0, i) || !checkSpan(t, &s, text, i+1, len(text)) {
					t.Fatalf("text %q: a stretch cut at the space at %d was refused", text, i)
				}
			}
		}
	}
	if accepted == 0 || spaced == 0 {
		t.Fatalf("accepted %d random stretches and %d cut at spaces: the test checks nothing", accepted, spaced)
	}
}

// TestCountTokensOfJoinedTexts checks that counting the tokens of texts
// and of stretches of stretches gives the analysis of the texts joined by
// a blank line.
func TestCountTokensOfJoinedTexts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var s AnalysisScratch
	for range 500 {
		a, b := randomText(r, 6), randomText(r, 9)
		want := s.AnalyzeCounts(a + "\n\n" + b)
		if got := s.CountTokens(s.Tokenize(a), s.Tokenize(b)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q + %q: counted %+v, analysed joined %+v", a, b, got, want)
		}
		outer, ok := s.Tokenize("x "+b+" y").Span(2, 2+len(b))
		if !ok {
			t.Fatalf("%q between spaces was refused", b)
		}
		for i := 0; i < len(b); i++ {
			if inner, ok := outer.Span(i, len(b)); ok {
				if got, want := s.CountTokens(inner), s.AnalyzeCounts(b[i:]); !reflect.DeepEqual(got, want) {
					t.Fatalf("%q [%d:]: counted %+v, analysed alone %+v", b, i, got, want)
				}
			}
		}
	}
}

// FuzzTokensSpan checks any text and stretch as the test above does.
func FuzzTokensSpan(f *testing.F) {
	f.Add("Alice's cat, v1.2 — 漢字 e\u0301t\u0301é don't.", 8, 20)
	f.Add("a.b 3.5. x'", 0, 3)
	var s AnalysisScratch
	f.Fuzz(func(t *testing.T, text string, start, end int) {
		if start < 0 || end < start || end > len(text) {
			return
		}
		checkSpan(t, &s, text, start, end)
	})
}
