package indexer

import (
	"strings"
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
		if got := contextText(&tt.parent, lead{}); got != tt.want {
			t.Errorf("contextText(%+v) = %q, want %q", tt.parent, got, tt.want)
		}
	}
}

func TestChildTextsLeadWithTheirSectionHeading(t *testing.T) {
	u := &Unit{
		Parents: []hierarchy.Parent{
			{ID: "p1", HeadingPath: []string{"Guide", "Install"}},
			{ID: "p2"},
		},
		Children: []hierarchy.Child{{ID: "c1", ParentID: "p1", Text: "Run it."}, {ID: "c2", ParentID: "p2", Text: "Plain."}},
	}
	got := u.childTexts()
	if want := []string{"Install\n\nRun it.", "Plain."}; got[0] != want[0] || got[1] != want[1] {
		t.Errorf("childTexts() = %q, want %q", got, want)
	}
}

func TestOpeningSectionJoinsTheContextOfLaterSections(t *testing.T) {
	text := "## Abstract\n\nWe study zebras.\n\n## Method\n\nWe count stripes."
	doc := hierarchy.Document{ID: "d", Text: text}
	parents := []hierarchy.Parent{
		{ID: "p0", DocID: "d", Start: 0, Text: "## Abstract\n\nWe study zebras.", HeadingPath: []string{"Abstract"}},
		{ID: "p1", DocID: "d", Start: 31, Text: "## Method\n\nWe count stripes.", HeadingPath: []string{"Method"}},
	}
	l := leadOf(doc, parents)
	if l.text != "## Abstract\n\nWe study zebras." || l.end != 31 {
		t.Fatalf("lead = %+v, want the abstract ending at 31", l)
	}
	if got := contextText(&parents[0], l); got != "Abstract\n\n"+parents[0].Text {
		t.Errorf("the opening section's own context repeats it: %q", got)
	}
	if got, want := contextText(&parents[1], l), l.text+"\n\nMethod\n\n"+parents[1].Text; got != want {
		t.Errorf("later section's context = %q, want %q", got, want)
	}
	if got := leadOf(doc, []hierarchy.Parent{{ID: "p", DocID: "d", Text: text}}); got != (lead{}) {
		t.Errorf("a document without section parents has a lead: %+v", got)
	}
	long := strings.Repeat("word ", LeadWords+10)
	if got := openingSection(long, nil); len(strings.Fields(got.text)) != LeadWords {
		t.Errorf("a long opening keeps %d words, want %d", len(strings.Fields(got.text)), LeadWords)
	}
}
