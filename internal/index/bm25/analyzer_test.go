package bm25

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"empty", "", nil},
		{"only separators", "  ,.;!? -- __ ", nil},
		{"lowercase and stem", "Running RUNS runner", []string{"run", "run", "runner"}},
		{"stop words", "The cat and the hat, it is not a bat", []string{"cat", "hat", "bat"}},
		{"contraction kept", "Don't stop", []string{"don't", "stop"}},
		{"curly apostrophe", "don’t", []string{"don't"}},
		{"possessive", "Alice's dogs' owners", []string{"alic", "dog", "owner"}},
		{"possessive stop word", "It's there", nil},
		{"apostrophe at edges", "'quoted' o'neil", []string{"quot", "o'neil"}},
		{"decimals and versions", "Version 3.5 and v1.2.3 at 10.0.0.1.", []string{"version", "3.5", "v1.2.3", "10.0.0.1"}},
		{"comma separates numbers", "1,000", []string{"1", "000"}},
		{"dot not between digits", "end. .5 3. a.b", []string{"end", "5", "3", "b"}},
		{"numbers not stemmed", "1990s covid19 running2", []string{"1990s", "covid19", "running2"}},
		{"hyphen and underscore split", "state-of-the-art snake_case", []string{"state", "art", "snake", "case"}},
		{"unicode letters", "Naïve CAFÉ résumé", []string{"naïv", "café", "résumé"}},
		{"combining marks stay", "e\u0301cole \u0301x", []string{"e\u0301col", "x"}},
		{"greek final sigma folds", "ΣΊΣΥΦΟΣ σίσυφος", []string{"σίσυφοσ", "σίσυφοσ"}},
		{"han and hiragana per character", "東京は首都", []string{"東", "京", "は", "首", "都"}},
		{"katakana and hangul words", "カタカナ 한국어", []string{"カタカナ", "한국어"}},
		{"invalid utf8 separates", "ab\xffcd", []string{"ab", "cd"}},
		{"symbols separate", "x+y=z $5 #tag @user a/b", []string{"x", "y", "z", "5", "tag", "user", "b"}},
		{"long token dropped", "ok " + strings.Repeat("z", MaxTokenBytes+1) + " fine", []string{"ok", "fine"}},
		{"longest token kept", strings.Repeat("z", MaxTokenBytes), []string{strings.Repeat("z", MaxTokenBytes)}},
		{"long non-ascii token dropped", strings.Repeat("é", MaxTokenBytes/2+1) + " ok", []string{"ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Analyze(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("Analyze(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestAppendAnalyzedAppends(t *testing.T) {
	got := AppendAnalyzed([]string{"keep"}, "cats running")
	if want := []string{"keep", "cat", "run"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestIsStopWord(t *testing.T) {
	for _, w := range []string{"the", "a", "with", "not"} {
		if !IsStopWord(w) {
			t.Errorf("IsStopWord(%q) = false", w)
		}
	}
	for _, w := range []string{"cat", "The", ""} {
		if IsStopWord(w) {
			t.Errorf("IsStopWord(%q) = true", w)
		}
	}
}

func TestAnalyzeCachedWordsDoNotAllocate(t *testing.T) {
	text := "The quick brown foxes were jumping over the lazy dogs' kennels, again and again."
	buf := make([]string, 0, 64)
	AppendAnalyzed(buf, text) // warm the stem cache
	if n := testing.AllocsPerRun(100, func() { buf = AppendAnalyzed(buf[:0], text) }); n != 0 {
		t.Fatalf("AppendAnalyzed allocates %v times per run on cached words", n)
	}
}

// TestStemCacheEvictionKeepsResults pushes far more distinct words through
// the cache than it holds, from several goroutines, and checks every result
// against the uncached stemmer.
func TestStemCacheEvictionKeepsResults(t *testing.T) {
	c := newStemCache()
	suffixes := []string{"ing", "s", "ed", "ly", "ness", ""}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := range stemCacheSlots {
				w := fmt.Sprintf("w%cord%d%s", 'a'+rune(i%26), i, suffixes[(i+g)%len(suffixes)])
				w = strings.Map(func(r rune) rune {
					if r >= '0' && r <= '9' {
						return 'a' + r - '0'
					}
					return r
				}, w)
				if got, want := c.term([]byte(w)), stemTerm(w); got != want {
					errs <- fmt.Errorf("term(%q) = %q, want %q", w, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := c.term([]byte("the")); got != "" {
		t.Errorf("stop word term = %q, want empty", got)
	}
}

func TestAnalyzeConcurrent(t *testing.T) {
	texts := syntheticTexts(200, 30, 1)
	want := make([][]string, len(texts))
	for i, text := range texts {
		want[i] = Analyze(text)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i, text := range texts {
				if got := Analyze(text); !slices.Equal(got, want[i]) {
					t.Errorf("concurrent Analyze(%q) = %q, want %q", text, got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"Don't stop", "v1.2.3 's '", "東京は", "e\u0301", "\xff\xfe", strings.Repeat("é", 70), "ΣΊΣΥΦΟΣ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		terms := Analyze(text)
		for _, term := range terms {
			if term == "" || !utf8.ValidString(term) || strings.ContainsFunc(term, unicode.IsSpace) {
				t.Fatalf("Analyze(%q) produced bad term %q", text, term)
			}
		}
		if again := Analyze(text); !slices.Equal(again, terms) {
			t.Fatalf("Analyze(%q) not deterministic", text)
		}
	})
}
