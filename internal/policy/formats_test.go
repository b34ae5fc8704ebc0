package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// codeSample reads a source file of the splitters' test data.
func codeSample(t *testing.T, name string) hierarchy.Document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "retrieval", "split", "testdata", "code", name))
	if err != nil {
		t.Fatal(err)
	}
	return hierarchy.Document{ID: "src/" + name, Text: string(data)}
}

func texts(ps []hierarchy.Parent) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Text
	}
	return out
}

func TestAPILanguagesAreLangChains(t *testing.T) {
	var got []string
	for _, l := range v1alpha1.Languages {
		got = append(got, string(l))
	}
	var want []string
	for _, l := range split.Languages() {
		want = append(want, string(l))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("v1alpha1.Languages %q, want LangChain's %q", got, want)
	}
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		doc  hierarchy.Document
		want documentKind
	}{
		{hierarchy.Document{ID: "cmd/main.go"}, documentKind{v1alpha1.FormatCode, "go"}},
		{hierarchy.Document{ID: "README.md"}, documentKind{v1alpha1.FormatMarkdown, "markdown"}},
		{hierarchy.Document{ID: "guide.rst"}, documentKind{v1alpha1.FormatText, "rst"}},
		{hierarchy.Document{ID: "site/index.HTML"}, documentKind{v1alpha1.FormatHTML, "html"}},
		{hierarchy.Document{ID: "manual.pdf"}, documentKind{v1alpha1.FormatPDF, ""}},
		{hierarchy.Document{ID: "notes.txt"}, documentKind{v1alpha1.FormatText, ""}},
		{hierarchy.Document{ID: "record-17"}, documentKind{v1alpha1.FormatText, ""}},
		{hierarchy.Document{ID: "bin/tool", Metadata: map[string]string{hierarchy.MetaLanguage: "python"}}, documentKind{v1alpha1.FormatCode, "python"}},
		{hierarchy.Document{ID: "page.md", Metadata: map[string]string{hierarchy.MetaFormat: "HTML"}}, documentKind{v1alpha1.FormatHTML, "markdown"}},
		{hierarchy.Document{ID: "x.go", Metadata: map[string]string{hierarchy.MetaLanguage: "klingon", hierarchy.MetaFormat: "Slides"}}, documentKind{v1alpha1.FormatCode, "go"}},
	}
	for _, tt := range tests {
		if got := kindOf(tt.doc); got != tt.want {
			t.Errorf("kindOf(%s %v) = %v, want %v", tt.doc.ID, tt.doc.Metadata, got, tt.want)
		}
	}
}

// TestDefaultPolicySplitsCodeAsFromLanguage: a policy that says nothing
// splits code exactly as LangChain's from_language does, and prose as
// before.
func TestDefaultPolicySplitsCodeAsFromLanguage(t *testing.T) {
	c := mustCompile(t, v1alpha1.ChunkingPolicySpec{Parent: &v1alpha1.ChunkSize{ChunkSize: 400}, Child: &v1alpha1.ChunkSize{ChunkSize: 100, ChunkOverlap: 10}})
	for _, name := range []string{"inventory.py", "ratelimit.go", "shapes.ts"} {
		doc := codeSample(t, name)
		o := split.DefaultOptions(400, 0)
		var err error
		if o.Separators, o.IsSeparatorRegex, err = split.Separators(string(split.LanguageOfPath(name))); err != nil {
			t.Fatal(err)
		}
		want, err := split.NewRecursive(o)
		if err != nil {
			t.Fatal(err)
		}
		if got := texts(c.Builder.Build(doc).Parents); !reflect.DeepEqual(got, want.SplitText(doc.Text)) {
			t.Errorf("%s: parents are not from_language's", name)
		}
	}
	prose := docOf(prose(20))
	plain, err := split.NewRecursive(split.DefaultOptions(400, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(c.Builder.Build(prose).Parents); !reflect.DeepEqual(got, plain.SplitText(prose.Text)) {
		t.Error("prose is no longer split with the Default separators")
	}
}

func TestSectionsOnCodeAreDefinitions(t *testing.T) {
	c := mustCompile(t, v1alpha1.ChunkingPolicySpec{
		Separators: &v1alpha1.Separators{Preset: v1alpha1.SeparatorsMarkdown},
		Parent:     &v1alpha1.ChunkSize{ChunkSize: 600, Boundaries: v1alpha1.BoundariesSections},
		Child:      &v1alpha1.ChunkSize{ChunkSize: 200, ChunkOverlap: 20},
	})
	res := c.Builder.Build(codeSample(t, "inventory.py"))
	var paths [][]string
	for _, p := range res.Parents {
		paths = append(paths, p.HeadingPath)
	}
	for _, want := range [][]string{{"class Inventory", "def reserve"}, {"def load"}, {"class Part"}} {
		if !slices.ContainsFunc(paths, func(p []string) bool { return reflect.DeepEqual(p, want) }) {
			t.Errorf("no parent under %q; parents under %q", want, paths)
		}
	}
	// Markdown in the same policy still follows its headings.
	md := c.Builder.Build(hierarchy.Document{ID: "guide.md", Text: "# Guide\n\nIntro text that is long enough to stand alone as a section of its own.\n\n## Install\n\nRun the installer and answer its questions; it takes a minute or two."})
	if len(md.Parents) != 2 || !reflect.DeepEqual(md.Parents[1].HeadingPath, []string{"Guide", "Install"}) {
		t.Errorf("Markdown sections: %+v", md.Parents)
	}
}

func TestFormatsRulesChooseSettings(t *testing.T) {
	c := mustCompile(t, v1alpha1.ChunkingPolicySpec{
		Parent: &v1alpha1.ChunkSize{ChunkSize: 1000},
		Formats: []v1alpha1.FormatRule{
			{Match: v1alpha1.FormatMatch{Format: v1alpha1.FormatCode}, LengthUnit: v1alpha1.LengthTokens,
				Parent: &v1alpha1.ChunkSize{ChunkSize: 120, Boundaries: v1alpha1.BoundariesSections}, Child: &v1alpha1.ChunkSize{ChunkSize: 40}},
			{Match: v1alpha1.FormatMatch{Languages: []v1alpha1.Language{"rust"}}, Separators: &v1alpha1.Separators{Custom: []string{"\n\n", "\n", " ", ""}}},
			{Match: v1alpha1.FormatMatch{Format: v1alpha1.FormatText}, Parent: &v1alpha1.ChunkSize{ChunkSize: 500}},
		},
	})
	tokens, err := LengthFunc("Tokens", "cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	goDoc := c.Builder.Build(codeSample(t, "ratelimit.go"))
	for _, p := range goDoc.Parents {
		if n := tokens(p.Text); n > 120 {
			t.Errorf("Go parent of %d tokens, the Code rule allows 120", n)
		}
		if len(p.HeadingPath) == 0 && p.Ordinal > 0 {
			t.Errorf("Go parent %d has no definition name", p.Ordinal)
		}
	}
	// The rust rule wins over the Code rule: its own separators, the
	// policy's sizes in characters.
	rs := codeSample(t, "queue.rs")
	custom, err := split.NewRecursive(split.DefaultOptions(1000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(c.Builder.Build(rs).Parents); !reflect.DeepEqual(got, custom.SplitText(rs.Text)) {
		t.Errorf("rust is not split by its languages rule")
	}
	// Text takes its rule; Markdown keeps the policy's 1000.
	text := prose(30)
	for id, size := range map[string]int{"notes.txt": 500, "notes.md": 1000} {
		longest := 0
		for _, p := range c.Builder.Build(hierarchy.Document{ID: id, Text: text}).Parents {
			longest = max(longest, split.CodePoints(p.Text))
		}
		if longest > size || longest < size*3/4 {
			t.Errorf("%s: longest parent %d characters, want close to %d", id, longest, size)
		}
	}
}

// TestLengthOfFollowsTheRule checks that a document is measured in the
// unit its formats rule sets, and others in the policy's.
func TestLengthOfFollowsTheRule(t *testing.T) {
	c := mustCompile(t, v1alpha1.ChunkingPolicySpec{
		Formats: []v1alpha1.FormatRule{{Match: v1alpha1.FormatMatch{Format: v1alpha1.FormatCode}, LengthUnit: v1alpha1.LengthTokens,
			Parent: &v1alpha1.ChunkSize{ChunkSize: 120}, Child: &v1alpha1.ChunkSize{ChunkSize: 40}}},
	})
	text := "func main() { fmt.Println(\"tokens are fewer than characters\") }"
	for id, want := range map[string]v1alpha1.LengthUnit{"main.go": v1alpha1.LengthTokens, "notes.md": v1alpha1.LengthCharacters} {
		unit, length, err := c.LengthOf(hierarchy.Document{ID: id, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		if unit != want {
			t.Errorf("%s: unit %s, want %s", id, unit, want)
		}
		if chars := split.CodePoints(text); (want == v1alpha1.LengthTokens) != (length(text) < chars) {
			t.Errorf("%s: length %d of %d characters, want it in %s", id, length(text), chars, want)
		}
	}
}
