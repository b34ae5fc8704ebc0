package inspector

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestReadDocumentReadsAsAFileOfItsName(t *testing.T) {
	cases := []struct {
		name, text, format, want string
	}{
		{"", "# Title\n\nBody.", "Markdown", "# Title\n\nBody."},
		{"notes.txt", "plain words", "Text", "plain words"},
		{"page.html", "<!doctype html><html><body><main><h1>Title</h1><p>Body text.</p></main></body></html>", "HTML", "# Title"},
		{"main.go", "package main\n\nfunc main() {}\n", "Code", "package main"},
	}
	for _, c := range cases {
		doc, format, err := ReadDocument(c.name, c.text)
		if err != nil {
			t.Errorf("%q: %v", c.name, err)
			continue
		}
		if string(format) != c.format || !strings.Contains(doc.Text, c.want) {
			t.Errorf("%q: read as %s, text %q; want %s holding %q", c.name, format, doc.Text, c.format, c.want)
		}
	}
	for name, text := range map[string]string{"paper.pdf": "%PDF-1.7\n", "rows.jsonl": `{"id": "a", "text": "b"}`, "blank.md": "\n \n"} {
		if _, _, err := ReadDocument(name, text); err == nil {
			t.Errorf("%s was read; want it refused", name)
		}
	}
}

// TestCutLaysOutEachStrategy checks the levels, counts and offsets of a
// two-level policy, a sentence window and a policy of three levels.
func TestCutLaysOutEachStrategy(t *testing.T) {
	doc, _, err := ReadDocument("guide.md", "# Guide\n\n## Install\n\nRun the installer. Then restart the machine. Check the log.\n\n"+
		"## Use\n\nOpen the app. Pick a file. Press start and wait for the result to appear on screen.")
	if err != nil {
		t.Fatal(err)
	}
	runes := []rune(doc.Text)
	cases := []struct {
		policy    string
		levels    []string
		ancestors bool
	}{
		{"spec: {parent: {chunkSize: 80}, child: {chunkSize: 30, chunkOverlap: 5}}", []string{"Parent", "Child"}, false},
		{"spec: {strategy: SentenceWindow, window: {sentences: 1}}", []string{"Window", "Sentence"}, false},
		{"spec: {separators: {preset: Markdown}, levels: [Section, Parent, Child], section: {chunkSize: 200}, parent: {chunkSize: 60}, child: {chunkSize: 25}}",
			[]string{"Section", "Parent", "Child"}, true},
	}
	for _, c := range cases {
		compiled, err := CompilePolicy(c.policy)
		if err != nil {
			t.Fatalf("%s: %v", c.policy, err)
		}
		l, err := Cut(doc, compiled, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.policy, err)
		}
		if !reflect.DeepEqual(l.Levels, c.levels) || (l.Ancestors > 0) != c.ancestors || len(l.Parents) < 2 || len(l.Children) < len(l.Parents) {
			t.Errorf("%s: levels %v, %d ancestors, %d parents, %d children", c.policy, l.Levels, l.Ancestors, len(l.Parents), len(l.Children))
		}
		for i, ch := range l.Children {
			p := l.Parents[ch.Parent]
			if ch.Start < 0 || ch.End > len(runes) || ch.Length != ch.End-ch.Start || ch.Start < p.Start || ch.End > p.End {
				t.Errorf("%s: child %d at [%d, %d) of length %d, parent at [%d, %d)", c.policy, i, ch.Start, ch.End, ch.Length, p.Start, p.End)
			}
		}
	}
}

func TestCutRefusesTooManyUnits(t *testing.T) {
	doc, _, err := ReadDocument("", strings.Repeat("word ", 200))
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := CompilePolicy("spec: {parent: {chunkSize: 20}, child: {chunkSize: 5}}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Cut(doc, compiled, 100); !errors.Is(err, ErrTooManyUnits) || !strings.Contains(err.Error(), "more than the 100") {
		t.Errorf("Cut of 200 words into 5-character children with a limit of 100: %v", err)
	}
}

// TestCutMeasuresInTheDocumentsUnit checks that sizes are counted in
// tokens where the policy says so.
func TestCutMeasuresInTheDocumentsUnit(t *testing.T) {
	doc, _, err := ReadDocument("", strings.Repeat("Tokens are fewer than characters in English prose. ", 20))
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := CompilePolicy("spec: {lengthUnit: Tokens, parent: {chunkSize: 100}, child: {chunkSize: 20}}")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Cut(doc, compiled, 0)
	if err != nil {
		t.Fatal(err)
	}
	if l.LengthUnit != "Tokens" {
		t.Errorf("unit %s, want Tokens", l.LengthUnit)
	}
	for i, p := range l.Parents {
		if p.Length > 100 || p.Length >= p.End-p.Start {
			t.Errorf("parent %d of %d code points has length %d: want at most 100 tokens, fewer than its characters", i, p.End-p.Start, p.Length)
		}
	}
}

func TestRunNamesThePolicyAtFault(t *testing.T) {
	req := PreviewRequest{Document: "Some text to cut.", Policies: []string{"", "spec: {strategy: Sideways}"}}
	if _, err := Run(req, 0); err == nil || !strings.HasPrefix(err.Error(), "policy B: ") {
		t.Errorf("Run with a bad second policy: %v, want an error naming policy B", err)
	}
	req.Policies = req.Policies[:1]
	p, err := Run(req, 0)
	if err != nil || len(p.Layouts) != 1 || p.Name != DefaultName || p.Format != "Markdown" {
		t.Errorf("Run with the default policy: %+v, %v", p, err)
	}
}
