package indexer

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// TestSplitFieldFitsItsBufferAndDecodes checks that encodeSplitField
// writes a split, with headings, metadata and spans, into the buffer
// splitSizeHint sized without growing it, that the field decodes to the
// same split, and that a spilled unit decoded keeps nothing of the
// buffer it was read from.
func TestSplitFieldFitsItsBufferAndDecodes(t *testing.T) {
	s := synthtest.New(5, 3000)
	stats := embed.NewCorpusStats()
	for n := range 40 {
		u := &Unit{LeadText: s.Sentence(), LeadEnd: n}
		for p := range 1 + n%4 {
			parent := hierarchy.Parent{
				ID: fmt.Sprintf("p%d-%d", n, p), DocID: fmt.Sprintf("d%d", n), Title: s.Sentence(),
				HeadingPath: []string{s.Word(), s.Sentence()}, Ordinal: p, Text: s.Paragraph(), Start: 100 * p,
				Metadata: map[string]string{"source": s.Word(), "lang": "en"},
			}
			for c := range 1 + (n+p)%5 {
				child := hierarchy.Child{ID: fmt.Sprintf("%s-c%d", parent.ID, c), ParentID: parent.ID, DocID: parent.DocID, Ordinal: c, Text: s.Sentence(), Start: -1, ParentStart: 7 * c}
				parent.Children = append(parent.Children, hierarchy.Span{ID: child.ID, Start: child.ParentStart, End: child.ParentStart + 5})
				u.Children = append(u.Children, child)
			}
			u.Parents = append(u.Parents, parent)
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
	if got.LeadText != want.LeadText || got.LeadEnd != want.LeadEnd || !reflect.DeepEqual(got.Parents, want.Parents) || !reflect.DeepEqual(got.Children, want.Children) {
		t.Fatalf("unit %d decodes to\n%+v\nwant\n%+v", n, got, want)
	}
}
