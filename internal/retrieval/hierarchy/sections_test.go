package hierarchy

import (
	"slices"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

func TestSectionParentsCarryTheirHeadingPath(t *testing.T) {
	within, err := split.NewRecursive(split.DefaultOptions(400, 0))
	if err != nil {
		t.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(40, 0))
	if err != nil {
		t.Fatal(err)
	}
	b := &Builder{Strategy: chunking.ParentChild, Revision: "r", Child: child, Parent: split.NewSectioner(split.SectionOptions{
		Headers: split.NewMarkdownHeaderSplitter(split.MarkdownHeaderOptions{Headers: split.MarkdownHeadings()}),
		Within:  within, ChunkSize: 400,
	})}
	doc := Document{ID: "d", Text: "# Guide\n\nAbout the guide.\n\n## Install\n\nRun the installer, then check the version it prints."}
	want := [][]string{{"Guide"}, {"Guide", "Install"}}
	for name, splitter := range map[string]DocumentSplitter{"parent-child": b, "flat parents": FlatParents{b}} {
		var got [][]string
		for _, p := range splitter.Build(doc).Parents {
			got = append(got, p.HeadingPath)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: heading paths %q, want %q", name, got, want)
		}
	}
	flat := FlatChildren{b}.Build(doc)
	for _, p := range flat.Parents[1:] {
		if !slices.Equal(p.HeadingPath, want[1]) {
			t.Errorf("flat child %q has heading path %q, want its parent's %q", p.Text, p.HeadingPath, want[1])
		}
	}
}
