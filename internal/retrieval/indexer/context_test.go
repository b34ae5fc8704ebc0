package indexer

import (
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

func TestContextTextNamesTitleHeadingsAndParent(t *testing.T) {
	tests := []struct {
		parent hierarchy.Parent
		want   string
	}{
		{hierarchy.Parent{Text: "body"}, "body"},
		{hierarchy.Parent{Title: "Guide", Text: "body"}, "Guide\n\nbody"},
		{hierarchy.Parent{Title: "Guide", HeadingPath: []string{"Guide", "Install"}, Text: "body"}, "Guide\n\nGuide > Install\n\nbody"},
		{hierarchy.Parent{HeadingPath: []string{"Install"}, Text: "body"}, "Install\n\nbody"},
	}
	for _, tt := range tests {
		if got := contextText(&tt.parent); got != tt.want {
			t.Errorf("contextText(%+v) = %q, want %q", tt.parent, got, tt.want)
		}
	}
}

func TestChildTextsLeadWithTheirSectionHeading(t *testing.T) {
	ix := &Index{
		Parents: []hierarchy.Parent{
			{ID: "p1", HeadingPath: []string{"Guide", "Install"}},
			{ID: "p2"},
		},
		Children: []hierarchy.Child{{ID: "c1", ParentID: "p1", Text: "Run it."}, {ID: "c2", ParentID: "p2", Text: "Plain."}},
	}
	got := ix.childTexts()
	if want := []string{"Install\n\nRun it.", "Plain."}; got[0] != want[0] || got[1] != want[1] {
		t.Errorf("childTexts() = %q, want %q", got, want)
	}
}
