package segment_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/segment"
)

// smallSegment returns the bytes of a segment of two parents and three
// children, with contexts.
func smallSegment(t *testing.T) []byte {
	t.Helper()
	var scratch bm25.AnalysisScratch
	w := segment.NewWriter(true)
	for p, parent := range []struct {
		context  string
		children []string
	}{
		{"Hotels near the station fill early in summer", []string{"Hotels near the station", "fill early in summer"}},
		{"Meals are served from seven", []string{"Meals are served from seven"}},
	} {
		if err := w.AddParent(parentID(p), docID(p), scratch.AnalyzeCounts(parent.context)); err != nil {
			t.Fatal(err)
		}
		for c, text := range parent.children {
			if err := w.AddChild(childID(p, c), c, scratch.AnalyzeCounts(text)); err != nil {
				t.Fatal(err)
			}
		}
	}
	data, err := w.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestOpenRefusesEveryDamagedByte checks that a segment with any one byte
// changed, or cut short, fails to open with ErrCorrupt.
func TestOpenRefusesEveryDamagedByte(t *testing.T) {
	data := smallSegment(t)
	if _, err := segment.Open(data); err != nil {
		t.Fatalf("the segment as written: %v", err)
	}
	for i := range data {
		damaged := append([]byte(nil), data...)
		damaged[i] ^= 0x10
		if _, err := segment.Open(damaged); !errors.Is(err, segment.ErrCorrupt) {
			t.Fatalf("byte %d changed: error %v, want ErrCorrupt", i, err)
		}
	}
	for n := range len(data) {
		if _, err := segment.Open(data[:n]); !errors.Is(err, segment.ErrCorrupt) {
			t.Fatalf("cut to %d bytes: error %v, want ErrCorrupt", n, err)
		}
	}
}

// TestOpenChecksWhatTheChecksumCovers checks that bytes whose checksum is
// right but whose sections contradict each other are refused too, with a
// reason.
func TestOpenChecksWhatTheChecksumCovers(t *testing.T) {
	data := smallSegment(t)
	h := func(i int) uint32 { return binary.LittleEndian.Uint32(data[4+4*i:]) }
	children, parents, terms := h(2), h(3), h(4)
	childPostings := int(h(5))
	childTokens := 64
	parentFirst := childTokens + 4*int(children)
	termEnds := parentFirst + 4*int(parents+1) + 4*int(parents)
	childEnds := termEnds + 4*int(terms)
	childPosts := childEnds + 4*int(terms)
	parentEnds := childPosts + 8*childPostings
	parentPosts := parentEnds + 4*int(terms)
	idEnds := parentPosts + 12*int(h(6))
	parentDocs := idEnds + 8*int(children)
	parentIDEnds := parentDocs + 4*int(parents)
	docEnds := parentIDEnds + 4*int(parents)
	for _, c := range []struct {
		name string
		at   int
		word uint32
	}{
		{"a child's length beyond the total", childTokens, 1000},
		{"a parent starting after the last child", parentFirst + 4, children + 1},
		{"terms ending beyond their arena", termEnds + 4*int(terms-1), 1 << 20},
		{"a term's postings ending beyond the postings", childEnds, 1 << 20},
		{"a posting in a slot beyond the children", childPosts, children},
		{"a child posting with a zero frequency", childPosts + 4, 0},
		{"a parent posting beyond the parents", parentPosts, parents},
		{"a term's first children not at its first child posting", parentPosts + 8, 1},
		{"flags this format does not know", 8, 6},
		{"another format version", 4, 1},
		{"a reserved word set", 4 + 4*12, 1},
		{"a parent of a document beyond the documents", parentDocs, h(9)},
		{"parent ids ending beyond their arena", parentIDEnds + 4*int(parents-1), 1 << 20},
		{"document ids ending before the arena's end", docEnds + 4*int(h(9)-1), 0},
	} {
		damaged := append([]byte(nil), data...)
		binary.LittleEndian.PutUint32(damaged[c.at:], c.word)
		body := damaged[:len(damaged)-4]
		binary.LittleEndian.PutUint32(damaged[len(body):], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
		_, err := segment.Open(damaged)
		if !errors.Is(err, segment.ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", c.name, err)
			continue
		}
		t.Logf("%s: %v", c.name, err)
	}
}

// TestWriterIsDeterministicAndReadable checks that the same input gives
// the same bytes, and that what opens is what was written.
func TestWriterIsDeterministicAndReadable(t *testing.T) {
	a, b := smallSegment(t), smallSegment(t)
	if string(a) != string(b) {
		t.Fatal("the same parents and children gave different bytes")
	}
	s, err := segment.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	if s.Children() != 3 || s.Parents() != 2 || !s.Contexts() {
		t.Fatalf("children %d, parents %d, contexts %v; want 3, 2, true", s.Children(), s.Parents(), s.Contexts())
	}
	if s.ID(2) != childID(1, 0) {
		t.Fatalf("slot 2 holds %q, want %q", s.ID(2), childID(1, 0))
	}
	for slot, want := range []struct {
		parent, ordinal int
	}{{0, 0}, {0, 1}, {1, 0}} {
		p := s.ParentOf(uint32(slot))
		if p != want.parent || s.Ordinal(uint32(slot)) != want.ordinal {
			t.Fatalf("slot %d: parent %d, ordinal %d; want %d, %d", slot, p, s.Ordinal(uint32(slot)), want.parent, want.ordinal)
		}
		if s.ParentID(p) != parentID(p) || s.DocID(p) != docID(p) {
			t.Fatalf("parent %d: id %q of document %q; want %q of %q", p, s.ParentID(p), s.DocID(p), parentID(p), docID(p))
		}
	}
	k, ok := s.Lookup("hotel")
	if !ok || s.Term(k) != "hotel" || s.DocFreq(k) != 1 {
		t.Fatalf("hotel: index %d, found %v, df %d; want found in one child", k, ok, s.DocFreq(k))
	}
	if k, ok := s.Lookup("summer"); !ok || s.DocFreq(k) != 1 {
		t.Fatalf("summer: found %v; want found in one child", ok)
	}
	if _, ok := s.Lookup("breakfast"); ok {
		t.Fatal("found a term no text holds")
	}
	if s.Tokens() == 0 {
		t.Fatal("no tokens counted")
	}
}

// TestWriterRefusesWhatItCannotStore checks the writer's errors.
func TestWriterRefusesWhatItCannotStore(t *testing.T) {
	w := segment.NewWriter(false)
	if err := w.AddChild("orphan", 0, bm25.Analysis{}); !errors.Is(err, segment.ErrNoParent) {
		t.Fatalf("a child before any parent: error %v, want ErrNoParent", err)
	}
	if err := w.AddParent("p", "d", bm25.Analysis{}); err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]bm25.Analysis{
		"ids instead of terms": {IDs: []uint32{1}, Counts: []uint32{1}, Tokens: 1},
		"a repeated term":      {Terms: []string{"a", "a"}, Counts: []uint32{1, 1}, Tokens: 2},
		"a zero count":         {Terms: []string{"a"}, Counts: []uint32{0}, Tokens: 1},
		"counts not matching":  {Terms: []string{"a"}, Tokens: 1},
	} {
		if err := w.AddChild("c", 0, a); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := w.AddChild("c", -1, bm25.Analysis{}); err == nil {
		t.Error("a negative ordinal: accepted")
	}
}
