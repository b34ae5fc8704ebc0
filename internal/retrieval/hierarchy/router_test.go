package hierarchy

import (
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
)

// byExtension routes documents whose id ends in ext to its own levels.
type byExtension struct {
	ext    string
	levels Levels
}

func (r byExtension) Levels(doc Document) (Levels, bool) {
	return r.levels, strings.HasSuffix(doc.ID, r.ext)
}

func TestRouterChoosesADocumentsLevels(t *testing.T) {
	b := parentChild(t, "r1", 400, 0, 100, 0)
	b.Router = byExtension{ext: ".go", levels: Levels{Parent: recursive(t, 60, 0), Child: recursive(t, 20, 0)}}
	text := strings.Repeat("alpha beta gamma delta epsilon zeta. ", 30)
	for id, sizes := range map[string][2]int{"a.go": {60, 20}, "a.md": {400, 100}} {
		doc := Document{ID: id, Text: text}
		res := b.Build(doc)
		checkInvariants(t, doc, res)
		longestParent, longestChild := 0, 0
		for _, p := range res.Parents {
			longestParent = max(longestParent, len(p.Text))
		}
		for _, c := range res.Children {
			longestChild = max(longestChild, len(c.Text))
		}
		if longestParent > sizes[0] || longestParent < sizes[0]*3/4 || longestChild > sizes[1] {
			t.Errorf("%s: longest parent %d, child %d; want the levels of %v", id, longestParent, longestChild, sizes)
		}
	}
	// Sentence windows split long sentences with the routed child splitter.
	b.Strategy = chunking.SentenceWindow
	for _, c := range b.Build(Document{ID: "b.go", Text: text}).Children {
		if len(c.Text) > 20 {
			t.Fatalf("window child %q longer than the routed 20", c.Text)
		}
	}
}
