package policy

import (
	"slices"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// TestCompileLevels checks that a policy of three levels cuts Markdown
// into sections at its headings, each section into parents and children
// under the section's heading path, and Go code into sections at its
// definitions; and that the default policy keeps two levels.
func TestCompileLevels(t *testing.T) {
	if b := mustCompile(t, v1alpha1.ChunkingPolicySpec{}).Builder; !b.IsTwoLevels() || b.Section != nil {
		t.Fatalf("the default policy compiles to shape %v", b.Shape)
	}
	c := mustCompile(t, v1alpha1.ChunkingPolicySpec{
		Levels: []v1alpha1.Level{v1alpha1.LevelSection, v1alpha1.LevelParent, v1alpha1.LevelChild},
		Parent: &v1alpha1.ChunkSize{ChunkSize: 400}, Child: &v1alpha1.ChunkSize{ChunkSize: 100, ChunkOverlap: 10},
		Section: &v1alpha1.ChunkSize{ChunkSize: 1600, MinChunkSize: 5},
	})
	if want := []hierarchy.Level{hierarchy.LevelSection, hierarchy.LevelParent, hierarchy.LevelChild}; !slices.Equal(c.Builder.Shape, want) {
		t.Fatalf("shape %v, want %v", c.Builder.Shape, want)
	}
	md := docOf("# Handbook\n\n" + prose(6) + "\n\n## Travel\n\n" + prose(4))
	res := c.Builder.Build(md)
	var headings [][]string
	for _, s := range res.Ancestors {
		headings = append(headings, s.HeadingPath)
		if s.Level != hierarchy.LevelSection || s.ParentID != "" {
			t.Errorf("ancestor %q: level %q under %q, want a top-level section", s.Text[:20], s.Level, s.ParentID)
		}
	}
	if want := [][]string{{"Handbook"}, {"Handbook", "Travel"}}; !slices.EqualFunc(headings, want, slices.Equal) {
		t.Errorf("sections under %q, want %q", headings, want)
	}
	for _, p := range res.Parents {
		if p.Level != hierarchy.LevelParent || p.ParentID == "" || len(p.HeadingPath) == 0 || len([]rune(p.Text)) > 400 {
			t.Errorf("parent %q: level %q under %q, headings %q", p.Text[:20], p.Level, p.ParentID, p.HeadingPath)
		}
	}
	code := hierarchy.Document{ID: "main.go", Text: "package main\n\n// A is a.\nfunc A() int {\n\treturn 1\n}\n\n// B is b.\nfunc B() int {\n\treturn 2\n}\n"}
	var names [][]string
	for _, s := range c.Builder.Build(code).Ancestors {
		names = append(names, s.HeadingPath)
	}
	if len(names) == 0 || !slices.ContainsFunc(names, func(n []string) bool { return slices.Equal(n, []string{"func B"}) }) {
		t.Errorf("Go sections under %q, want one named func B", names)
	}
}
