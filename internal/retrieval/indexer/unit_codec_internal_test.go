package indexer

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// TestSplitFieldFitsItsBufferAndDecodes checks that encodeSplitField
// writes a split, with headings, pages, metadata and spans, into the buffer
// splitSizeHint sized without growing it, that the field decodes to the
// same split, and that a spilled unit decoded keeps nothing of the
// buffer it was read from.
func TestSplitFieldFitsItsBufferAndDecodes(t *testing.T) {
	s := synthtest.New(5, 3000)
	stats := bm25.NewCorpusStats()
	for n := range 40 {
		u := &Unit{LeadText: s.Sentence(), LeadEnd: n}
		for p := range 1 + n%4 {
			parent := hierarchy.Parent{
				ID: fmt.Sprintf("p%d-%d", n, p), DocID: fmt.Sprintf("d%d", n), Title: s.Sentence(),
				HeadingPath: []string{s.Word(), s.Sentence()}, Ordinal: p, Text: s.Paragraph(), Start: 100 * p,
				Metadata: map[string]string{"source": s.Word(), "lang": "en"},
			}
			if p%2 == 1 {
				parent.Pages = &hierarchy.Pages{First: n, Last: n + p}
			}
			for c := range 1 + (n+p)%5 {
				child := hierarchy.Child{ID: fmt.Sprintf("%s-c%d", parent.ID, c), ParentID: parent.ID, DocID: parent.DocID, Ordinal: c, Text: s.Sentence(), Start: -1, ParentStart: 7 * c}
				spanID := child.ID
				switch (n + c) % 6 { // children that refer to their parent, or to none, in every way
				case 0, 1:
					child.Text = parent.Text[child.ParentStart : child.ParentStart+5+n]
				case 2:
					child.ParentID = "a parent of another unit"
				case 3:
					child.DocID = "another document"
				case 4:
					spanID = "another child"
				}
				parent.Children = append(parent.Children, hierarchy.Span{ID: spanID, Start: child.ParentStart, End: child.ParentStart + 5})
				u.Children = append(u.Children, child)
			}
			if n%3 == 1 { // a unit of three levels: parents under sections
				parent.Level, parent.ParentID = hierarchy.LevelParent, fmt.Sprintf("s%d", n)
			}
			u.Parents = append(u.Parents, parent)
		}
		if n%3 == 1 {
			u.Ancestors = []hierarchy.Parent{{
				ID: fmt.Sprintf("s%d", n), DocID: fmt.Sprintf("d%d", n), Level: hierarchy.LevelSection, Text: s.Paragraph(),
				HeadingPath: []string{s.Word()}, Children: []hierarchy.Span{{ID: u.Parents[0].ID, Start: 0, End: 9}},
			}}
		}
		field := encodeSplitField(u)
		length, head := binary.Uvarint(field)
		if head <= 0 || int(length) != len(field)-head {
			t.Fatalf("unit %d: field length prefix %d (%d bytes) for a field of %d bytes", n, length, head, len(field))
		}
		if int(length) > splitSizeHint(u) {
			t.Errorf("unit %d: split of %d bytes outgrew its hint of %d", n, length, splitSizeHint(u))
		}
		r := &unitReader{s: string(field)}
		var got Unit
		r.splitField(&got)
		if r.err != nil || r.s != "" {
			t.Fatalf("unit %d: decoding the field: %v (%d bytes left)", n, r.err, len(r.s))
		}
		checkSameSplit(t, n, &got, u)

		var ids []uint32
		payload := spillAnalyses(field, u, stats, &ids)
		spilled, err := decodeSpilled(payload, stats)
		if err != nil {
			t.Fatalf("unit %d: decoding it spilled: %v", n, err)
		}
		clear(payload) // a spill reuses its read buffer for the next unit
		checkSameSplit(t, n, spilled, u)
	}
}

// checkSameSplit fails unless got holds the split of want.
func checkSameSplit(t *testing.T, n int, got, want *Unit) {
	t.Helper()
	if got.LeadText != want.LeadText || got.LeadEnd != want.LeadEnd || !reflect.DeepEqual(got.Parents, want.Parents) || !reflect.DeepEqual(got.Children, want.Children) ||
		len(got.Ancestors)+len(want.Ancestors) > 0 && !reflect.DeepEqual(got.Ancestors, want.Ancestors) {
		t.Fatalf("unit %d decodes to\n%+v\nwant\n%+v", n, got, want)
	}
}

// A child that refers to its parent's id, span, document and text costs
// a few bytes beside its parent: a unit split from a document spills in
// not much more than its parents' texts.
func TestChildrenSpillAsReferencesToTheirParents(t *testing.T) {
	parent, _ := split.NewRecursive(split.DefaultOptions(400, 0))
	child, _ := split.NewRecursive(split.DefaultOptions(80, 0))
	b := &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "r", Parent: parent, Child: child}
	s := synthtest.New(9, 3000)
	var text strings.Builder
	for range 40 {
		text.WriteString(s.Paragraph() + "\n\n")
	}
	var scratch bm25.AnalysisScratch
	u := newUnit(hierarchy.Document{ID: "d", Title: "T", Text: text.String()}, b, unitShape{}, &scratch)
	parents, children := 0, 0
	for _, p := range u.Parents {
		parents += len(p.Text) + len(p.ID) + len(p.DocID) + len(p.Title)
		for _, sp := range p.Children {
			parents += len(sp.ID)
		}
	}
	for _, c := range u.Children {
		children += len(c.Text) + len(c.ID) + len(c.ParentID) + len(c.DocID)
	}
	field := encodeSplitField(u)
	if len(u.Children) < 20 || len(field) > parents+20*len(u.Children)+len(u.LeadText)+64 {
		t.Fatalf("%d children (%d bytes of fields) and their parents (%d bytes) spill in %d bytes", len(u.Children), children, parents, len(field))
	}
}

// A child's references that its unit cannot satisfy fail to decode.
func TestChildReferencesAreChecked(t *testing.T) {
	u := &Unit{Parents: []hierarchy.Parent{{ID: "p", DocID: "d", Text: "some text", Children: []hierarchy.Span{{ID: "c"}}}}}
	enc := func(flags uint, rest ...any) string {
		w := &unitWriter{}
		w.uint(uint64(flags))
		for _, v := range rest {
			switch v := v.(type) {
			case int:
				w.uint(uint64(v))
			case string:
				w.str(v)
			}
		}
		return string(w.b)
	}
	for _, c := range []struct {
		name, payload string
	}{
		{"an unknown flag", enc(childFlagsAll+1, "p", "c", "d", 0, 0, 0, "x")},
		{"a parent past the unit's", enc(childOfKnownParent|childIDFromSpan, 1, "d", 0, 0, 0, "x")},
		{"a parent past the unit's, nothing taken from it", enc(childOfKnownParent, 1, "c", "d", 0, 0, 0, "x")},
		{"a span past the parent's", enc(childOfKnownParent|childIDFromSpan|childDocOfParent, 0) + enc(0, 0, 0, "x")},
		{"a document of no parent", enc(childDocOfParent, "p", "c", 0, 0, 0, "x")},
		{"a text of no parent", enc(childTextInParent, "p", "c", "d", 0, 0, 0, 4)},
		{"a text past its parent's", enc(childOfKnownParent|childTextInParent, 0, "c", "d", 0, 0, 16, 4)}, // parent start 8, zigzagged
	} {
		r := &unitReader{s: c.payload}
		spans := []int{0}
		if c.name == "a span past the parent's" {
			spans[0] = 1
		}
		var got hierarchy.Child
		r.child(u, spans, &got)
		if r.err == nil {
			t.Errorf("%s: decoded as %+v", c.name, got)
		}
	}
}
