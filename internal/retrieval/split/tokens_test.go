package split

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// tokenSplitter is a Recursive with the default separators measuring in
// cl100k_base tokens.
func tokenSplitter(tb testing.TB, size, overlap int) (*Recursive, LengthFunc) {
	tb.Helper()
	tok, err := TokenLength(EncodingCl100kBase)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := NewRecursive(Options{ChunkSize: size, ChunkOverlap: overlap, Separators: DefaultSeparators(), KeepSeparator: KeepStart, StripWhitespace: true, Length: tok})
	if err != nil {
		tb.Fatal(err)
	}
	return r, tok
}

// tokenBound is how many tokens a chunk of a token splitter may measure
// (docs/spec/chunkingpolicy.md, "Lengths in tokens"): a merged chunk's
// pieces sum to at most size, each of the at most size-1 junctions between
// them and each stripped end may add one token; a chunk that is one code
// point (4 UTF-8 bytes at most) is at most 4 tokens.
func tokenBound(size int) int { return max(2*size+1, 4) }

// TestTokenChunksMayExceedChunkSizeAsInLangChain pins the case of the
// issue: LangChain's _merge_splits sums the token counts of the pieces
// (" 😀0万" and " 0A" sum to 6), and the stripped join of them measures 7.
func TestTokenChunksMayExceedChunkSizeAsInLangChain(t *testing.T) {
	parent, tok := tokenSplitter(t, 14, 2)
	child, _ := tokenSplitter(t, 6, 0)
	var children []string
	for _, p := range parent.SplitText("😀0A万0 😀0万 0A") {
		children = append(children, child.SplitText(p)...)
	}
	if want := []string{"😀0A万0", "😀0万 0A"}; !slices.Equal(children, want) {
		t.Fatalf("children %q, want %q", children, want)
	}
	if got := tok(" 😀0万") + tok(" 0A"); got > 6 {
		t.Errorf("the pieces measure %d, LangChain merges them only within 6", got)
	}
	if got := tok(children[1]); got != 7 {
		t.Errorf("%q measures %d tokens, want 7 (over the chunk size, as in LangChain)", children[1], got)
	}
}

// TestTokenChunksWithinBound splits random texts of the characters that
// tokenize unevenly (emoji, CJK, digits, quotes, white space) and checks
// tokenBound on every chunk.
func TestTokenChunksWithinBound(t *testing.T) {
	alphabet := []string{"😀", "👍🏽", "0", "12", "A", "ab", "万", "é", " ", "  ", "\n", "\n\n", "\t", "\u00a0", "'s", "!", "."}
	rng := rand.New(rand.NewSource(11))
	worst := 0.0
	for i := range 3000 {
		var b strings.Builder
		for range rng.Intn(60) + 1 {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		size := i%16 + 1
		r, tok := tokenSplitter(t, size, rng.Intn(size+1)/2)
		for _, c := range r.SplitText(b.String()) {
			n := tok(c)
			if n > tokenBound(size) {
				t.Fatalf("chunk %q of %q: %d tokens, over the bound %d for chunk size %d", c, b.String(), n, tokenBound(size), size)
			}
			if utf8.RuneCountInString(c) > 1 {
				worst = max(worst, float64(n)/float64(size))
			}
		}
	}
	t.Logf("largest merged chunk: %.2f times the chunk size", worst)
}
