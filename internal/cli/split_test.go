package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/document/documenttest"
)

// splitText has multi-byte characters before most chunks, so byte and
// code-point offsets differ.
const splitText = "# Über Zebras 🦓\n\n" +
	"Zebras — équidés d'Afrique — have black-and-white stripes. Each zebra's pattern is unique, like a fingerprint.\n\n" +
	"Naïve observers think stripes are decoration; researchers at Zürich suggest they repel biting flies.\n\n" +
	"A herd is called a dazzle. Foals recognise their mother's stripes within days of birth.\n"

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %s", raw)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

type splitJSON struct {
	Parents []struct {
		ID    string `json:"id"`
		Text  string `json:"text"`
		Start int    `json:"start"`
	} `json:"parents"`
	Children []struct {
		ID       string `json:"id"`
		ParentID string `json:"parentId"`
		Text     string `json:"text"`
		Start    int    `json:"start"`
	} `json:"children"`
}

func TestSplitSchemaAndOffsets(t *testing.T) {
	dir := t.TempDir()
	policy := writeFile(t, dir, "policy.yaml", testPolicy)
	file := writeFile(t, dir, "zebras.md", splitText)
	out, stderr := mustExecute(t, "split", "--policy", policy, file)
	if stderr != "" {
		t.Errorf("stderr: %q", stderr)
	}

	// The schema, exactly.
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if got := keysOf(t, json.RawMessage(out)); !slices.Equal(got, []string{"children", "parents"}) {
		t.Fatalf("top-level keys %v", got)
	}
	var parents, children []json.RawMessage
	if err := json.Unmarshal(top["parents"], &parents); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(top["children"], &children); err != nil {
		t.Fatal(err)
	}
	if len(parents) < 2 || len(children) <= len(parents) {
		t.Fatalf("premise: %d parents, %d children", len(parents), len(children))
	}
	for _, p := range parents {
		if got := keysOf(t, p); !slices.Equal(got, []string{"id", "start", "text"}) {
			t.Errorf("parent keys %v", got)
		}
	}
	for _, c := range children {
		if got := keysOf(t, c); !slices.Equal(got, []string{"id", "parentId", "start", "text"}) {
			t.Errorf("child keys %v", got)
		}
	}

	// Offsets are code points into the file, for parents and children.
	var s splitJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	runes := []rune(splitText)
	at := func(start int, text string) string {
		end := start + utf8.RuneCountInString(text)
		if start < 0 || end > len(runes) {
			return "<out of range>"
		}
		return string(runes[start:end])
	}
	parentIDs := map[string]bool{}
	for _, p := range s.Parents {
		parentIDs[p.ID] = true
		if got := at(p.Start, p.Text); got != p.Text {
			t.Errorf("parent at %d: file holds %q, text is %q", p.Start, got, p.Text)
		}
	}
	multiByteBefore := 0
	ids := map[string]bool{}
	for _, c := range s.Children {
		if got := at(c.Start, c.Text); got != c.Text {
			t.Errorf("child at %d: file holds %q, text is %q", c.Start, got, c.Text)
		}
		if !parentIDs[c.ParentID] {
			t.Errorf("child %s names unknown parent %s", c.ID, c.ParentID)
		}
		if ids[c.ID] || parentIDs[c.ID] {
			t.Errorf("id %s is not unique", c.ID)
		}
		ids[c.ID] = true
		if len(string(runes[:c.Start])) != c.Start {
			multiByteBefore++
		}
	}
	if multiByteBefore == 0 {
		t.Fatal("premise: no child follows a multi-byte character, offsets are untested")
	}

	// Ids are stable across runs.
	again, _ := mustExecute(t, "split", "--policy", policy, file)
	if again != out {
		t.Error("a second run printed different output")
	}
}

func TestSplitEmptyFilePrintsEmptyLists(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "empty.md", "  \n\n ")
	out, _ := mustExecute(t, "split", file)
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"parents", "children"} {
		if string(top[k]) != "[]" {
			t.Errorf("%s = %s, want []", k, top[k])
		}
	}
}

func TestSplitDefaultPolicyAndBadFile(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "zebras.md", splitText)
	out, _ := mustExecute(t, "split", file)
	var s splitJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	// The default parent (1500) holds the whole file.
	if len(s.Parents) != 1 || s.Parents[0].Text != strings.TrimSpace(splitText) {
		t.Errorf("default policy: %d parents", len(s.Parents))
	}
	bad := writeFile(t, dir, "bad.md", "ok \xff\xfe not ok")
	_, stderr, err := execute(t, "split", bad)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "invalid UTF-8 at byte offset 3") {
		t.Errorf("split of invalid UTF-8: %v", err)
	}
	if stderr != "" {
		t.Errorf("stderr: %q", stderr)
	}
}

// TestSplitPDFGivesPagesAndSections splits a PDF manual with section
// parents: every parent names its pages, and the outline its headings.
func TestSplitPDFGivesPagesAndSections(t *testing.T) {
	dir := t.TempDir()
	pdf := writeFile(t, dir, "manual.pdf", string(documenttest.Manual(t, documenttest.ManualOptions{})))
	policy := writeFile(t, dir, "policy.yaml", "apiVersion: parentrag.io/v1alpha1\nkind: ChunkingPolicy\nmetadata: {name: s}\nspec:\n  separators: {preset: Markdown}\n  parent: {chunkSize: 4000, minChunkSize: 50, boundaries: Sections}\n")
	stdout, _, err := execute(t, "split", "--policy", policy, pdf)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Parents []struct {
			HeadingPath []string `json:"headingPath"`
			Pages       *struct{ First, Last int }
		} `json:"parents"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range out.Parents {
		if p.Pages == nil || p.Pages.First < 1 || p.Pages.Last < p.Pages.First {
			t.Errorf("parent %v has pages %+v", p.HeadingPath, p.Pages)
		}
		found = found || strings.Join(p.HeadingPath, " > ") == "4 Proxies > 4.2 Configuring the proxy"
	}
	if !found {
		t.Errorf("no parent under 4 Proxies > 4.2 Configuring the proxy in %s", stdout)
	}
}
