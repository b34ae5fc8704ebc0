package utf8word

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// pieces are the parts random texts are made of: ASCII runs longer and
// shorter than a word, multi-byte code points and invalid bytes.
var pieces = []string{"a", "plain words ", "0123456789abcdef", "é", "日本語", "🙂", "\xff", "\xe6\x97", "\x80", "\n"}

// randomText joins n random pieces.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestCountsAsUTF8Does checks IsASCII, RuneCount and Skip against the
// standard library's byte-at-a-time reading on random texts, skipping
// from every offset a code point starts at, by every count up to past
// the end.
func TestCountsAsUTF8Does(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		s := randomText(r, i%40)
		if got, want := RuneCount(s), utf8.RuneCountInString(s); got != want {
			t.Fatalf("RuneCount(%q) = %d, want %d", s, got, want)
		}
		if got, want := IsASCII(s), !strings.ContainsFunc(s, func(c rune) bool { return c >= utf8.RuneSelf }); got != want {
			t.Fatalf("IsASCII(%q) = %v, want %v", s, got, want)
		}
		for from := 0; from < len(s); {
			for n := range utf8.RuneCountInString(s[from:]) + 3 {
				wantAt, wantN := from, 0
				for wantN < n && wantAt < len(s) {
					_, size := utf8.DecodeRuneInString(s[wantAt:])
					wantAt, wantN = wantAt+size, wantN+1
				}
				if at, passed := Skip(s, from, n); at != wantAt || passed != wantN {
					t.Fatalf("Skip(%q, %d, %d) = %d, %d; want %d, %d", s, from, n, at, passed, wantAt, wantN)
				}
			}
			_, size := utf8.DecodeRuneInString(s[from:])
			from += size
		}
	}
}

// TestLoadIsLittleEndian checks that Load puts the first byte lowest.
func TestLoadIsLittleEndian(t *testing.T) {
	if got := Load("xabcdefghy", 1); got != 0x6867666564636261 {
		t.Fatalf("Load = %#x", got)
	}
}
