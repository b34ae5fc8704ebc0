package hierarchy

import (
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/chunking"
)

// checkSingleLevel verifies that res pairs each child with a parent of the
// same id, text and start, the parent spanning all of its only child.
func checkSingleLevel(t *testing.T, doc Document, res Result) {
	t.Helper()
	if len(res.Parents) != len(res.Children) {
		t.Fatalf("%d parents for %d children, want one each", len(res.Parents), len(res.Children))
	}
	checkInvariants(t, doc, res)
	for i, p := range res.Parents {
		c := res.Children[i]
		if c.ID != p.ID || c.ParentID != p.ID {
			t.Errorf("pair %d: child %s (parent %s), parent %s, want one id", i, c.ID, c.ParentID, p.ID)
		}
		if c.Text != p.Text || c.Start != p.Start || c.ParentStart != 0 {
			t.Errorf("pair %d: child %q@%d/%d, parent %q@%d", i, c.Text, c.Start, c.ParentStart, p.Text, p.Start)
		}
		want := []Span{{ID: p.ID, Start: 0, End: utf8.RuneCountInString(p.Text)}}
		if !reflect.DeepEqual(p.Children, want) {
			t.Errorf("pair %d: spans %+v, want %+v", i, p.Children, want)
		}
		if p.Ordinal != i || c.Ordinal != i {
			t.Errorf("pair %d: ordinals %d/%d", i, p.Ordinal, c.Ordinal)
		}
	}
}

func TestFlat(t *testing.T) {
	docs := []Document{
		{ID: "ascii.md", Title: "Ascii", Text: paragraphs(5, 120, "flat"), Metadata: map[string]string{"k": "v"}},
		{ID: "emoji.md", Title: "Emoji", Text: paragraphs(4, 90, "😀ünï")},
	}
	for _, doc := range docs {
		t.Run(doc.ID, func(t *testing.T) {
			b := parentChild(t, "r", 200, 0, 50, 10)
			two := b.Build(doc)
			if len(two.Parents) < 2 || len(two.Children) <= len(two.Parents) {
				t.Fatalf("reference split too small: %d parents, %d children", len(two.Parents), len(two.Children))
			}

			t.Run("children", func(t *testing.T) {
				res := FlatChildren{Builder: b}.Build(doc)
				checkSingleLevel(t, doc, res)
				if len(res.Children) != len(two.Children) {
					t.Fatalf("%d children, builder made %d", len(res.Children), len(two.Children))
				}
				for i, c := range res.Children {
					ref := two.Children[i]
					if c.ID != ref.ID || c.Text != ref.Text || c.Start != ref.Start {
						t.Errorf("child %d: %s %q@%d, builder child %s %q@%d", i, c.ID, c.Text, c.Start, ref.ID, ref.Text, ref.Start)
					}
				}
			})

			t.Run("parents", func(t *testing.T) {
				res := FlatParents{Builder: b}.Build(doc)
				checkSingleLevel(t, doc, res)
				if len(res.Parents) != len(two.Parents) {
					t.Fatalf("%d parents, builder made %d", len(res.Parents), len(two.Parents))
				}
				for i, p := range res.Parents {
					ref := two.Parents[i]
					if p.ID != ref.ID || p.Text != ref.Text || p.Start != ref.Start {
						t.Errorf("parent %d: %s %q@%d, builder parent %s %q@%d", i, p.ID, p.Text, p.Start, ref.ID, ref.Text, ref.Start)
					}
				}
			})
		})
	}
}

func TestFlatSentenceWindowChildren(t *testing.T) {
	doc := Document{ID: "s", Text: "First one. Second one. Third one."}
	b := &Builder{Strategy: chunking.SentenceWindow, Revision: "r", Child: recursive(t, 100, 0), Window: 1}
	res := FlatChildren{Builder: b}.Build(doc)
	checkSingleLevel(t, doc, res)
	for i, want := range []string{"First one.", "Second one.", "Third one."} {
		if res.Parents[i].Text != want {
			t.Errorf("parent %d is %q, want the sentence %q alone", i, res.Parents[i].Text, want)
		}
	}
}

func TestFlatImplementsDocumentSplitter(t *testing.T) {
	b := parentChild(t, "r", 100, 0, 20, 0)
	for _, s := range []DocumentSplitter{b, FlatChildren{Builder: b}, FlatParents{Builder: b}} {
		if res := s.Build(Document{ID: "x", Text: "some words here"}); len(res.Children) != 1 {
			t.Errorf("%T: %d children for a tiny document, want 1", s, len(res.Children))
		}
	}
}
