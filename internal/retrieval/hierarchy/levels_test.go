package hierarchy

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// levelsDoc is a Markdown document of two sections, long enough for every
// level to hold several units of the level below.
var levelsDoc = Document{ID: "guide.md", Title: "Guide", Metadata: map[string]string{"team": "docs"}, Text: "# Guide\n\n" +
	strings.Repeat("The guide explains the tool. It is short and it is plain. Read it once. ", 6) + "\n\n## Install\n\n" +
	strings.Repeat("Run the installer. Check the version it prints! Then start the service, and wait. ", 8)}

// levelsBuilder returns a builder of the given shape over small sizes:
// sections of up to 600 code points, parents of 250, children of 80.
func levelsBuilder(t *testing.T, shape ...Level) *Builder {
	t.Helper()
	return &Builder{
		Strategy: chunking.ParentChild, Revision: "r", Shape: shape,
		Parent: recursive(t, 250, 0), Child: recursive(t, 80, 10),
		Section: split.NewSectioner(split.SectionOptions{
			Headers: split.NewMarkdownHeaderSplitter(split.MarkdownHeaderOptions{Headers: split.MarkdownHeadings()}),
			Within:  recursive(t, 600, 0), ChunkSize: 600,
		}),
	}
}

func TestTwoLevelsSpelledOutAreTheDefault(t *testing.T) {
	implicit := levelsBuilder(t).Build(levelsDoc)
	explicit := levelsBuilder(t, LevelParent, LevelChild).Build(levelsDoc)
	if !reflect.DeepEqual(implicit, explicit) {
		t.Fatal("the shape [parent, child] spelled out splits otherwise than the default")
	}
	for _, p := range explicit.Parents {
		if p.Level != "" || p.ParentID != "" {
			t.Fatalf("a parent of the default shape has level %q and parent %q, want neither", p.Level, p.ParentID)
		}
	}
	if len(explicit.Ancestors) != 0 {
		t.Fatalf("%d ancestors in the default shape", len(explicit.Ancestors))
	}
}

// TestEveryShapeHoldsTogether checks, for shapes of two to five levels,
// that every unit lies where its Start says in the document and where its
// span says in the unit that holds it, that every link names a unit of the
// level above, that each unit lists exactly the units it holds, that ids
// are unique and repeatable, and that units under no heading of their own
// carry their section's.
func TestEveryShapeHoldsTogether(t *testing.T) {
	for _, shape := range [][]Level{
		{LevelSection, LevelParent, LevelChild},
		{LevelDocument, LevelSection, LevelParent, LevelChild, LevelSentence},
		{LevelDocument, LevelChild},
		{LevelParent, LevelSentence},
		{LevelSection, LevelChild, LevelSentence},
	} {
		t.Run(strings.Trim(strings.Join(slices.Collect(func(yield func(string) bool) {
			for _, l := range shape {
				yield(string(l))
			}
		}), "-"), "-"), func(t *testing.T) {
			res := levelsBuilder(t, shape...).Build(levelsDoc)
			checkLevels(t, shape, res)
			if again := levelsBuilder(t, shape...).Build(levelsDoc); !reflect.DeepEqual(res, again) {
				t.Error("the same document split twice differs")
			}
		})
	}
}

// checkLevels checks the promises of TestEveryShapeHoldsTogether on res.
func checkLevels(t *testing.T, shape []Level, res Result) {
	t.Helper()
	units := map[string]*Parent{}
	for _, list := range [][]Parent{res.Ancestors, res.Parents} {
		for i := range list {
			p := &list[i]
			if units[p.ID] != nil {
				t.Fatalf("id %s twice", p.ID)
			}
			units[p.ID] = p
			checkLocated(t, p.Text, p.Start)
		}
	}
	held := map[string][]string{}
	for _, p := range slices.Concat(res.Ancestors, res.Parents) {
		level := slices.Index(shape, p.Level)
		if level < 0 || level == len(shape)-1 {
			t.Fatalf("unit %s has level %q, not a stored level of %v", p.ID, p.Level, shape)
		}
		if (level == len(shape)-2) != slices.ContainsFunc(res.Parents, func(q Parent) bool { return q.ID == p.ID }) {
			t.Errorf("unit %s of level %s is in the wrong list", p.ID, p.Level)
		}
		if p.DocID != levelsDoc.ID || p.Title != levelsDoc.Title || !reflect.DeepEqual(p.Metadata, levelsDoc.Metadata) {
			t.Errorf("unit %s lost its document's fields", p.ID)
		}
		if level == 0 {
			if p.ParentID != "" {
				t.Errorf("top unit %s names %s above it", p.ID, p.ParentID)
			}
			continue
		}
		up := units[p.ParentID]
		if up == nil || up.Level != shape[level-1] {
			t.Fatalf("unit %s of level %s names %q above it, not a unit of level %s", p.ID, p.Level, p.ParentID, shape[level-1])
		}
		held[up.ID] = append(held[up.ID], p.ID)
		checkSpan(t, up, p.ID, p.Text, p.Start)
		if len(p.HeadingPath) == 0 && len(up.HeadingPath) > 0 {
			t.Errorf("unit %s lost the heading path %q of the unit above", p.ID, up.HeadingPath)
		}
	}
	for _, c := range res.Children {
		p := units[c.ParentID]
		if p == nil || p.Level != shape[len(shape)-2] {
			t.Fatalf("child %s names %q, not a parent", c.ID, c.ParentID)
		}
		held[p.ID] = append(held[p.ID], c.ID)
		checkLocated(t, c.Text, c.Start)
		checkSpan(t, p, c.ID, c.Text, c.Start)
		if shape[len(shape)-1] == LevelSentence && len(split.Sentences(c.Text)) != 1 {
			t.Errorf("sentence leaf %q holds %d sentences", c.Text, len(split.Sentences(c.Text)))
		}
	}
	for id, p := range units {
		var spans []string
		for _, s := range p.Children {
			spans = append(spans, s.ID)
		}
		if !slices.Equal(spans, held[id]) {
			t.Errorf("unit %s lists %v, holds %v", id, spans, held[id])
		}
	}
	if len(res.Children) < 2*len(res.Parents) || len(res.Parents) == 0 {
		t.Errorf("%d parents and %d children: the document is too small to test", len(res.Parents), len(res.Children))
	}
}

// checkLocated fails unless text lies at start in the levels document.
func checkLocated(t *testing.T, text string, start int) {
	t.Helper()
	if got, ok := runeSlice(levelsDoc.Text, start, start+utf8.RuneCountInString(text)); !ok || got != text {
		t.Errorf("unit at %d reads %q in the document, want %q", start, got, text)
	}
}

// checkSpan fails unless up lists id at the place text has in it, which
// agrees with both units' places in the document.
func checkSpan(t *testing.T, up *Parent, id, text string, start int) {
	t.Helper()
	for _, s := range up.Children {
		if s.ID != id {
			continue
		}
		if got, ok := runeSlice(up.Text, s.Start, s.End); !ok || got != text || up.Start+s.Start != start {
			t.Errorf("span of %s in %s reads %q at %d, want %q at %d", id, up.ID, got, up.Start+s.Start, text, start)
		}
		return
	}
	t.Errorf("%s does not list %s", up.ID, id)
}
