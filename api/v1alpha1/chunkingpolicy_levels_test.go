package v1alpha1

import (
	"slices"
	"strings"
	"testing"
)

func TestValidateAcceptsLevels(t *testing.T) {
	for _, levels := range [][]Level{
		{LevelParent, LevelChild},
		{LevelSection, LevelParent, LevelChild},
		{LevelDocument, LevelSection, LevelParent, LevelChild, LevelSentence},
		{LevelDocument, LevelChild},
		{LevelParent, LevelSentence},
		{LevelSection, LevelChild},
	} {
		s := ChunkingPolicySpec{Levels: levels}
		if err := s.Validate(); err != nil {
			t.Errorf("levels %v: Validate() = %v, want nil", levels, err)
		}
	}
	withSection := ChunkingPolicySpec{Levels: []Level{LevelSection, LevelParent, LevelChild}, Section: &ChunkSize{ChunkSize: 5000, MinChunkSize: 100}}
	if err := withSection.Validate(); err != nil {
		t.Errorf("section sizes: Validate() = %v, want nil", err)
	}
}

func TestValidateRefusesLevels(t *testing.T) {
	tests := []struct {
		name string
		spec ChunkingPolicySpec
		want []string
	}{
		{"one level", ChunkingPolicySpec{Levels: []Level{LevelChild}},
			[]string{"spec.levels", "at least two levels"}},
		{"out of order", ChunkingPolicySpec{Levels: []Level{LevelChild, LevelParent}},
			[]string{"spec.levels", "largest first, in the order Document, Section, Parent, Child, Sentence"}},
		{"repeated", ChunkingPolicySpec{Levels: []Level{LevelParent, LevelParent, LevelChild}},
			[]string{"spec.levels[1]", "Duplicate value"}},
		{"unknown", ChunkingPolicySpec{Levels: []Level{"Chapter", LevelChild}},
			[]string{"spec.levels[0]", `"Chapter"`, "Document", "Sentence"}},
		{"with sentence windows", ChunkingPolicySpec{Strategy: StrategySentenceWindow, Levels: []Level{LevelParent, LevelChild}},
			[]string{"spec.levels", "need strategy ParentChild"}},
		{"section without its level", ChunkingPolicySpec{Section: &ChunkSize{ChunkSize: 5000}},
			[]string{"spec.section", "add Section to levels"}},
		{"section overlap", ChunkingPolicySpec{Levels: []Level{LevelSection, LevelChild}, Section: &ChunkSize{ChunkSize: 5000, ChunkOverlap: 10}},
			[]string{"spec.section", "never overlap"}},
		{"section no larger than parents", ChunkingPolicySpec{Levels: []Level{LevelSection, LevelParent, LevelChild}, Section: &ChunkSize{ChunkSize: 1500}},
			[]string{"spec.section.chunkSize", "section.chunkSize 1500 must be larger than parent.chunkSize 1500"}},
		{"section level beside section parents", ChunkingPolicySpec{Levels: []Level{LevelSection, LevelParent, LevelChild},
			Parent: &ChunkSize{ChunkSize: 1500, Boundaries: BoundariesSections}},
			[]string{"spec.parent.boundaries", "already cuts documents at their headings"}},
		{"section level beside a rule's section parents", ChunkingPolicySpec{Levels: []Level{LevelSection, LevelParent, LevelChild},
			Formats: []FormatRule{{Match: FormatMatch{Format: FormatCode}, Parent: &ChunkSize{ChunkSize: 1000, Boundaries: BoundariesSections}}}},
			[]string{"spec.formats[0].parent.boundaries", "already cuts documents at their headings"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want an error containing %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestDefaultLevelsKeepTheRevision: spelling out the two default levels
// changes nothing, so it keeps the revision of a policy that leaves them
// out (pinned in chunkingpolicy_revision_test.go); any other shape is a
// new revision.
func TestDefaultLevelsKeepTheRevision(t *testing.T) {
	implicit := ChunkingPolicySpec{}
	explicit := ChunkingPolicySpec{Levels: []Level{LevelParent, LevelChild}}
	if implicit.Revision() != explicit.Revision() || explicit.Revision() != "4bae304f53f98d36" {
		t.Errorf("revisions %s and %s, want both 4bae304f53f98d36", implicit.Revision(), explicit.Revision())
	}
	three := ChunkingPolicySpec{Levels: []Level{LevelSection, LevelParent, LevelChild}}
	sized := ChunkingPolicySpec{Levels: three.Levels, Section: &ChunkSize{ChunkSize: 6000, MinChunkSize: 600}}
	if three.Revision() == implicit.Revision() {
		t.Error("three levels share the revision of two")
	}
	if three.Revision() != sized.Revision() {
		t.Error("section sizes spelled out as their defaults changed the revision")
	}
	if n := three.Normalized(); !slices.Equal(n.Levels, three.Levels) || n.Section == nil || n.Section.ChunkSize != 6000 || n.Section.MinChunkSize != 600 {
		t.Errorf("normalised levels %v, section %+v", n.Levels, n.Section)
	}
}
