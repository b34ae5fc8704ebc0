package split

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestTrimPythonSpace(t *testing.T) {
	for in, want := range map[string]string{
		"":                               "",
		" \t\n\v\f\r x \x1c\x1d\x1e\x1f": "x",
		"\u0085\u00a0\u1680y\u2000\u200a\u2028\u2029\u202f\u205f\u3000": "y",
		"\u200bz\ufeff": "\u200bz\ufeff", // not Python whitespace
		"\u180e a":      "\u180e a",
		" \xff ":        "\xff",
	} {
		if got := TrimPythonSpace(in); got != want {
			t.Errorf("TrimPythonSpace(%q) = %q, want %q", in, got, want)
		}
	}
	if IsPythonSpace('\u200b') || !IsPythonSpace('\x1f') || !IsPythonSpace('\u3000') {
		t.Error("IsPythonSpace")
	}
}

func TestTokenLength(t *testing.T) {
	for _, tc := range []struct {
		enc  string
		text string
		want int
	}{
		{EncodingCl100kBase, "hello world", 2},
		{EncodingCl100kBase, "tiktoken is great!", 6},
		{EncodingCl100kBase, "", 0},
		{EncodingO200kBase, "hello world", 2},
	} {
		f, err := TokenLength(tc.enc)
		if err != nil {
			t.Fatal(err)
		}
		if got := f(tc.text); got != tc.want {
			t.Errorf("%s(%q) = %d tokens, want %d", tc.enc, tc.text, got, tc.want)
		}
	}
	if _, err := TokenLength("gpt-unknown"); err == nil {
		t.Error("unknown encoding accepted")
	}
}

func TestTokenSplitting(t *testing.T) {
	length, err := TokenLength(EncodingCl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions(8, 2)
	o.Length = length
	r, err := NewRecursive(o)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)
	chunks := r.Split(text)
	if len(chunks) < 10 {
		t.Fatalf("%d chunks", len(chunks))
	}
	located := 0
	for _, c := range chunks {
		// Token counts are not additive, so a merged chunk may exceed the
		// size by a token or two, as in LangChain. And as in LangChain,
		// start_index subtracts the overlap in tokens from an offset in
		// code points, so an overlapping chunk is often not found (-1).
		if n := length(c.Text); n > 10 {
			t.Errorf("chunk %q has %d tokens", c.Text, n)
		}
		if c.Start >= 0 {
			located++
			if !strings.HasPrefix(text[c.Start:], c.Text) {
				t.Errorf("chunk %q not at %d", c.Text, c.Start)
			}
		}
	}
	if chunks[0].Start != 0 || located == 0 {
		t.Errorf("start indexes %+v", chunks)
	}
}

func TestSeparatorEngines(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		regex   bool
		kind    sepKind
	}{
		{"", true, sepChars},
		{"", false, sepChars},
		{"\n\n", false, sepLiteral},
		{".", false, sepLiteral},
		{"\\.", true, sepLiteral},
		{"```\n", true, sepLiteral},
		{"\n\\\\chapter{", true, sepLiteral},
		{"\n#{1,6} ", true, sepSimple},
		{"\n\\*\\*\\*+\n", true, sepSimple},
		{"\n---+\n", true, sepSimple},
		{"\n=+\n", true, sepSimple},
		{"(?i)abc", true, sepRE2},
		{"a|b", true, sepRE2},
		{"\\n+", true, sepRE2}, // "\n" then "\n"+ merge into one run: sepSimple
		{"x*", true, sepPython},
		{"$", true, sepPython},
		{"(?<=mid)", true, sepPython},
		{"\\s*[,;]\\s*", true, sepPython},
		{"\\n(?!End\\s)If\\s+", true, sepPython},
	} {
		sp, err := compileSeparator(tc.pattern, tc.regex)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		want := tc.kind
		if tc.pattern == "\\n+" {
			want = sepSimple
		}
		if sp.kind != want {
			t.Errorf("%q: kind %d, want %d", tc.pattern, sp.kind, want)
		}
	}
	if _, err := compileSeparator("(", true); err == nil {
		t.Error("invalid regex accepted")
	}
}

// TestSimplePatternMatchesRegexp compares the byte-run matcher with Go's
// regexp on random texts over the patterns' alphabet.
func TestSimplePatternMatchesRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"\n", "#", " ", "*", "-", "_", "a", "="}
	for _, pat := range []string{"\n#{1,6} ", "\n\\*\\*\\*+\n", "\n---+\n", "\n___+\n", "\n=+\n", "#{2}-{1,3}", "\\n+", "a{2,}"} {
		p, ok := parseSimple(pat)
		if !ok {
			t.Fatalf("%q is not simple", pat)
		}
		re := regexp.MustCompile(pat)
		for i := 0; i < 3000; i++ {
			var sb strings.Builder
			for n := rng.IntN(40); n > 0; n-- {
				sb.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			s := sb.String()
			var want []int
			for _, m := range re.FindAllStringIndex(s, -1) {
				want = append(want, m...)
			}
			if got := p.appendMatches(s, nil); !reflect.DeepEqual(got, want) {
				t.Fatalf("%q on %q: %v, want %v", pat, s, got, want)
			}
		}
	}
	for _, pat := range []string{"a*b", "a+?", "(a)+", "a|b", "[ab]+", "(?i)a+", "é+"} {
		if _, ok := parseSimple(pat); ok {
			t.Errorf("%q taken for simple", pat)
		}
	}
}

func TestOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		size, overlap int
		want          string
	}{
		{0, 0, "chunk_size must be > 0, got 0"},
		{10, -1, "chunk_overlap must be >= 0, got -1"},
		{2, 4, "Got a larger chunk overlap (4) than chunk size (2), should be smaller."},
	} {
		_, err := NewRecursive(DefaultOptions(tc.size, tc.overlap))
		if err == nil || err.Error() != tc.want {
			t.Errorf("NewRecursive(%d, %d): %v, want %q", tc.size, tc.overlap, err, tc.want)
		}
		_, err = NewCharacter(DefaultCharacterOptions(tc.size, tc.overlap))
		if err == nil || err.Error() != tc.want {
			t.Errorf("NewCharacter(%d, %d): %v, want %q", tc.size, tc.overlap, err, tc.want)
		}
	}
	if _, err := NewRecursive(Options{ChunkSize: 5, KeepSeparator: 7}); err == nil {
		t.Error("invalid KeepSeparator accepted")
	}
	for _, preset := range []string{"klingon", "Go", "perl"} {
		if _, _, err := Separators(preset); err == nil {
			t.Errorf("preset %q accepted", preset)
		}
	}
}

func TestCreateDocumentsCopiesMetadata(t *testing.T) {
	r, err := NewRecursive(DefaultOptions(5, 0))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{"source": "a", "tags": []any{"x"}, "nested": map[string]any{"k": 1}}
	docs := CreateDocuments(r, []string{"alpha beta"}, []map[string]any{meta}, true)
	if len(docs) != 2 || docs[1].Metadata[StartIndexKey] != 6 {
		t.Fatalf("%+v", docs)
	}
	docs[0].Metadata["tags"].([]any)[0] = "changed"
	docs[0].Metadata["nested"].(map[string]any)["k"] = 2
	if meta["tags"].([]any)[0] != "x" || meta["nested"].(map[string]any)["k"] != 1 || docs[1].Metadata["tags"].([]any)[0] != "x" {
		t.Error("metadata shared between documents")
	}
	if _, ok := meta[StartIndexKey]; ok {
		t.Error("input metadata modified")
	}
}

func TestMarkdownHeaderReturnEachLine(t *testing.T) {
	m := NewMarkdownHeaderSplitter(MarkdownHeaderOptions{
		Headers:        []HeaderToSplitOn{{"#", "H1"}, {"##", "H2"}},
		ReturnEachLine: true,
	})
	got := m.SplitText("# A\nline one\nline two\n\n## B\n\tline three\u00a0\n")
	// As in LangChain, "each line" means each run of non-blank lines:
	// consecutive lines stay joined with "\n", only not aggregated with
	// "  \n" across blank lines.
	want := []Section{
		{"line one\nline two", map[string]string{"H1": "A"}},
		{"line three", map[string]string{"H1": "A", "H2": "B"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestSplitIsConcurrencySafe(t *testing.T) {
	o, err := languageOptions(LanguageMarkdown, 40, 10)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRecursive(o)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("# Head\n\nSome words here and there.\n\n---\n\nMore text — ünïcode.\n", 30)
	want := r.Split(text)
	done := make(chan []Chunk)
	for i := 0; i < 4; i++ {
		go func() { done <- r.Split(text) }()
	}
	for i := 0; i < 4; i++ {
		if got := <-done; !reflect.DeepEqual(got, want) {
			t.Error("concurrent Split differs")
		}
	}
}
