package policy

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

func docOf(text string) hierarchy.Document {
	return hierarchy.Document{ID: "doc.md", Text: text}
}

// prose returns n paragraphs of ordinary English sentences.
func prose(n int) string {
	sentences := []string{
		"The operator builds a new index revision beside the serving one.",
		"Queries keep reading the old revision until the new one is verified.",
		"Children are small and precise, parents are large and give context.",
		"A retention policy keeps the last two revisions for instant rollback.",
	}
	var paras []string
	for i := range n {
		var p []string
		for j := range 3 {
			p = append(p, sentences[(i+j)%len(sentences)])
		}
		paras = append(paras, strings.Join(p, " "))
	}
	return strings.Join(paras, "\n\n")
}

func mustCompile(t *testing.T, spec v1alpha1.ChunkingPolicySpec) *Compiled {
	t.Helper()
	c, err := Compile(&spec)
	if err != nil {
		t.Fatalf("Compile(%+v): %v", spec, err)
	}
	return c
}

func TestCompileCharacters(t *testing.T) {
	// Words of multi-byte letters: a byte-counting splitter would make far
	// smaller chunks than a code-point one.
	text := strings.Repeat("größe über straße café naïve ", 40) + "\n\n" + strings.Repeat("日本語 テキスト ", 30)
	c := mustCompile(t, v1alpha1.ChunkingPolicySpec{
		Parent: &v1alpha1.ChunkSize{ChunkSize: 200},
		Child:  &v1alpha1.ChunkSize{ChunkSize: 50, ChunkOverlap: 10},
	})
	res := c.Builder.Build(docOf(text))
	if len(res.Children) < 10 {
		t.Fatalf("%d children, want many", len(res.Children))
	}
	maxBytes, maxPoints := 0, 0
	for _, ch := range res.Children {
		n := utf8.RuneCountInString(ch.Text)
		if n > 50 {
			t.Errorf("child of %d code points, size is 50: %q", n, ch.Text)
		}
		maxBytes, maxPoints = max(maxBytes, len(ch.Text)), max(maxPoints, n)
	}
	if maxBytes <= 50 {
		t.Errorf("no child longer than 50 bytes (longest %d): sizes look like bytes, not code points", maxBytes)
	}
	if maxPoints < 40 {
		t.Errorf("longest child has %d code points, want children filled close to 50", maxPoints)
	}
	for _, p := range res.Parents {
		if n := utf8.RuneCountInString(p.Text); n > 200 {
			t.Errorf("parent of %d code points, size is 200", n)
		}
	}
	if got := c.Length("größe"); got != 5 {
		t.Errorf("Length(größe) = %d, want 5 code points", got)
	}
}

func TestCompileTokens(t *testing.T) {
	count, err := split.TokenLength("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	c := mustCompile(t, v1alpha1.ChunkingPolicySpec{
		LengthUnit: v1alpha1.LengthTokens,
		Parent:     &v1alpha1.ChunkSize{ChunkSize: 100},
		Child:      &v1alpha1.ChunkSize{ChunkSize: 20, ChunkOverlap: 4},
	})
	text := prose(6)
	res := c.Builder.Build(docOf(text))
	if len(res.Parents) < 2 || len(res.Children) < 6 {
		t.Fatalf("%d parents and %d children, want several", len(res.Parents), len(res.Children))
	}
	longest := 0
	for _, ch := range res.Children {
		if n := count(ch.Text); n > 20 {
			t.Errorf("child of %d tokens, size is 20: %q", n, ch.Text)
		}
		longest = max(longest, utf8.RuneCountInString(ch.Text))
	}
	if longest <= 20 {
		t.Errorf("no child longer than 20 code points (longest %d): sizes look like characters, not tokens", longest)
	}
	for _, p := range res.Parents {
		if n := count(p.Text); n > 100 {
			t.Errorf("parent of %d tokens, size is 100", n)
		}
	}
	if got, want := c.Length(text), count(text); got != want {
		t.Errorf("Length = %d, cl100k_base counts %d", got, want)
	}
	if c.Spec.Tokenizer != v1alpha1.TokenizerCL100K {
		t.Errorf("normalised tokenizer %q, want cl100k_base", c.Spec.Tokenizer)
	}
}

func TestCompileTokenizerChoice(t *testing.T) {
	o200k, err := split.TokenLength("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	cl100k, _ := split.TokenLength("cl100k_base")
	// A text the two encodings count differently.
	text := "नमस्ते दुनिया, यह एक परीक्षण वाक्य है। 你好世界，这是一个测试句子。"
	if o200k(text) == cl100k(text) {
		t.Skip("encodings agree on the sample text")
	}
	c := mustCompile(t, v1alpha1.ChunkingPolicySpec{LengthUnit: v1alpha1.LengthTokens, Tokenizer: v1alpha1.TokenizerO200K})
	if got := c.Length(text); got != o200k(text) {
		t.Errorf("Length = %d, o200k_base counts %d (cl100k_base %d)", got, o200k(text), cl100k(text))
	}
}

func TestCompileMarkdownPresetSplitsAtHeadings(t *testing.T) {
	// Two sections of ~330 code points each, parents of 500: two sections
	// never fit one parent, and each section fits one parent whole.
	section := func(name string) string {
		var paras []string
		for i := range 3 {
			paras = append(paras, strings.Repeat(name+" body text number "+string(rune('1'+i))+" ", 5))
		}
		return "## " + name + "\n\n" + strings.Join(paras, "\n\n")
	}
	a, b := section("Alpha"), section("Bravo")
	text := a + "\n\n" + b + "\n"
	if n := utf8.RuneCountInString(a); n < 260 || n > 480 {
		t.Fatalf("section of %d code points; the test needs 250..480", n)
	}
	spec := func(preset v1alpha1.SeparatorPreset) v1alpha1.ChunkingPolicySpec {
		return v1alpha1.ChunkingPolicySpec{
			Separators: &v1alpha1.Separators{Preset: preset},
			Parent:     &v1alpha1.ChunkSize{ChunkSize: 500},
			Child:      &v1alpha1.ChunkSize{ChunkSize: 100},
		}
	}

	md := mustCompile(t, spec(v1alpha1.SeparatorsMarkdown)).Builder.Build(docOf(text))
	var got []string
	for _, p := range md.Parents {
		got = append(got, p.Text)
	}
	if want := []string{strings.TrimSpace(a), strings.TrimSpace(b)}; !reflect.DeepEqual(got, want) {
		t.Errorf("Markdown parents:\n got %q\nwant one per section %q", got, want)
	}

	// The Default preset packs paragraphs greedily, so the second heading
	// ends up inside the first parent: the preset is what follows sections.
	def := mustCompile(t, spec(v1alpha1.SeparatorsDefault)).Builder.Build(docOf(text))
	if len(def.Parents) == 0 || !strings.Contains(def.Parents[0].Text, "## Bravo") {
		t.Errorf("Default preset first parent %q does not run into the second section", def.Parents[0].Text)
	}
}

func TestCompileCustomSeparators(t *testing.T) {
	tests := []struct {
		name   string
		seps   v1alpha1.Separators
		text   string
		parent int
		child  int
		want   []string // child texts
	}{
		// Pieces keep the separator at their start and are merged with no
		// joiner: "aaa"+"|bbb" fills a parent of 8, "|ccc" starts the next.
		{"regex", v1alpha1.Separators{Custom: []string{`\|`, ""}, Regex: true}, "aaa|bbb|ccc", 8, 4, []string{"aaa", "|bbb", "|ccc"}},
		{"literal", v1alpha1.Separators{Custom: []string{";", ""}}, "one;two;three", 9, 6, []string{"one", ";two", ";three"}},
		{"literal dot is not a wildcard", v1alpha1.Separators{Custom: []string{".", ""}}, "ab.cd.ef", 6, 3, []string{"ab", ".cd", ".ef"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seps := tt.seps
			c := mustCompile(t, v1alpha1.ChunkingPolicySpec{
				Separators: &seps,
				Parent:     &v1alpha1.ChunkSize{ChunkSize: tt.parent},
				Child:      &v1alpha1.ChunkSize{ChunkSize: tt.child},
			})
			var got []string
			for _, ch := range c.Builder.Build(docOf(tt.text)).Children {
				got = append(got, ch.Text)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("children %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCompileSentenceWindow(t *testing.T) {
	c := mustCompile(t, v1alpha1.ChunkingPolicySpec{Strategy: v1alpha1.StrategySentenceWindow, Window: &v1alpha1.Window{Sentences: 1}})
	if c.Builder.Strategy != chunking.SentenceWindow || c.Builder.Window != 1 {
		t.Fatalf("builder strategy %q window %d", c.Builder.Strategy, c.Builder.Window)
	}
	res := c.Builder.Build(docOf("First one. Second one. Third one."))
	want := []string{"First one. Second one.", "First one. Second one. Third one.", "Second one. Third one."}
	var got []string
	for _, p := range res.Parents {
		got = append(got, p.Text)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("windows %q, want %q", got, want)
	}
	def := mustCompile(t, v1alpha1.ChunkingPolicySpec{Strategy: v1alpha1.StrategySentenceWindow})
	if def.Builder.Window != v1alpha1.DefaultWindowSentences {
		t.Errorf("default window %d, want %d", def.Builder.Window, v1alpha1.DefaultWindowSentences)
	}
}

func TestCompileRevision(t *testing.T) {
	spec := v1alpha1.ChunkingPolicySpec{Child: &v1alpha1.ChunkSize{ChunkSize: 100}}
	c := mustCompile(t, spec)
	if c.Revision != spec.Revision() || c.Builder.Revision != c.Revision {
		t.Errorf("revisions: compiled %s, builder %s, spec %s", c.Revision, c.Builder.Revision, spec.Revision())
	}
	if !reflect.DeepEqual(c.Spec, spec.Normalized()) {
		t.Errorf("Spec %+v, want the normalised spec", c.Spec)
	}
	// Equivalent specs give the same ids; a different size gives others.
	doc := docOf(prose(3))
	same := mustCompile(t, v1alpha1.ChunkingPolicySpec{Child: &v1alpha1.ChunkSize{ChunkSize: 100}, LengthUnit: v1alpha1.LengthCharacters, Tokenizer: v1alpha1.TokenizerO200K})
	if a, b := c.Builder.Build(doc), same.Builder.Build(doc); !reflect.DeepEqual(a, b) {
		t.Error("equivalent specs split differently")
	}
	other := mustCompile(t, v1alpha1.ChunkingPolicySpec{Child: &v1alpha1.ChunkSize{ChunkSize: 100, ChunkOverlap: 1}})
	if other.Revision == c.Revision || other.Builder.Build(doc).Parents[0].ID == c.Builder.Build(doc).Parents[0].ID {
		t.Error("a different child overlap kept the revision or the parent ids")
	}
}

func TestCompileRefusesInvalid(t *testing.T) {
	tests := []struct {
		name string
		spec v1alpha1.ChunkingPolicySpec
		want string
	}{
		{"child not below parent", v1alpha1.ChunkingPolicySpec{Parent: &v1alpha1.ChunkSize{ChunkSize: 10}, Child: &v1alpha1.ChunkSize{ChunkSize: 10}}, "spec.child.chunkSize"},
		{"bad regex", v1alpha1.ChunkingPolicySpec{Separators: &v1alpha1.Separators{Custom: []string{"["}, Regex: true}}, "spec.separators.custom[0]"},
		{"unknown unit", v1alpha1.ChunkingPolicySpec{LengthUnit: "Bytes"}, "spec.lengthUnit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			c, err := Compile(&spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Compile = %v, %v; want an error naming %s", c, err, tt.want)
			}
		})
	}
}

func TestLengthFunc(t *testing.T) {
	cl100k, _ := split.TokenLength("cl100k_base")
	o200k, _ := split.TokenLength("o200k_base")
	text := "Hello, wörld! 🎉 parent-child retrieval"
	tests := []struct {
		unit, tokenizer string
		want            int
		wantErr         string
	}{
		{"", "", utf8.RuneCountInString(text), ""},
		{"Characters", "o200k_base", utf8.RuneCountInString(text), ""},
		{"Tokens", "", cl100k(text), ""},
		{"Tokens", "cl100k_base", cl100k(text), ""},
		{"Tokens", "o200k_base", o200k(text), ""},
		{"Lines", "", 0, `unknown length unit "Lines"`},
		{"Tokens", "nope", 0, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.unit+"/"+tt.tokenizer, func(t *testing.T) {
			f, err := LengthFunc(tt.unit, tt.tokenizer)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := f(text); got != tt.want {
				t.Errorf("length %d, want %d", got, tt.want)
			}
		})
	}
	if utf8.RuneCountInString(text) == cl100k(text) {
		t.Error("test text does not tell code points from tokens")
	}
}
