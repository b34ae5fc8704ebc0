package indexer

import (
	"reflect"
	"testing"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// checkAnalysedAsAlone fails unless every analysis of u is that of its
// text analysed alone.
func checkAnalysedAsAlone(t *testing.T, u *Unit, s *bm25.AnalysisScratch) {
	t.Helper()
	for i, text := range u.childTexts() {
		if want := s.AnalyzeCounts(text); !reflect.DeepEqual(u.ChildTerms[i], want) {
			t.Fatalf("child %s: %+v, analysed alone %+v", u.Children[i].ID, u.ChildTerms[i], want)
		}
	}
	for i := range u.Parents {
		if want := s.AnalyzeCounts(u.contextText(i)); !reflect.DeepEqual(u.ContextTerms[i], want) {
			t.Fatalf("context of %s: %+v, analysed alone %+v", u.Parents[i].ID, u.ContextTerms[i], want)
		}
	}
}

// TestChildrenNotCutFromTheirParentAreAnalysedAlone checks that a child
// whose text is not where its offset says, is not located, splits a word
// or has no parent is analysed alone, and analysed right.
func TestChildrenNotCutFromTheirParentAreAnalysedAlone(t *testing.T) {
	p := hierarchy.Parent{ID: "p", Title: "Title", HeadingPath: []string{"Top", "Part"}, Text: "Alice's naïve cat, v1.2 — don't run."}
	u := &Unit{Parents: []hierarchy.Parent{p}, Children: []hierarchy.Child{
		{ID: "whole", ParentID: "p", Text: p.Text, ParentStart: 0},
		{ID: "cut", ParentID: "p", Text: "naïve cat,", ParentStart: 8},
		{ID: "moved", ParentID: "p", Text: "cat,", ParentStart: 2},
		{ID: "lost", ParentID: "p", Text: "cat,", ParentStart: -1},
		{ID: "mid-word", ParentID: "p", Text: "lice's", ParentStart: 1},
		{ID: "mid-number", ParentID: "p", Text: "1.2", ParentStart: 20},
		{ID: "orphan", ParentID: "q", Text: "cat"},
	}}
	var s bm25.AnalysisScratch
	if alone := analyse(u, true, true, &s); alone != 5 {
		t.Errorf("%d children analysed alone, want 5 (moved, lost, mid-word, mid-number, orphan)", alone)
	}
	checkAnalysedAsAlone(t, u, &s)
}

// TestRuneCursorFindsEveryCodePoint asks a cursor for code points of a
// text of ASCII runs, multi-byte code points and invalid bytes, forward
// and back, past its end and below zero, and checks each answer against
// counting code points from the start.
func TestRuneCursorFindsEveryCodePoint(t *testing.T) {
	text := "plain ASCII words, then é and 日本語 \xff\xe6\x97 and 🙂 again, a long ASCII run to the end"
	var starts []int // starts[n] is the byte offset of code point n
	for i := range text {
		starts = append(starts, i)
	}
	starts = append(starts, len(text))
	c := runeCursor{text: text}
	for _, n := range []int{0, 3, 17, 17, 40, 9, len(starts) - 1, len(starts), 2, -1, 25, len(starts) + 5, 30} {
		got, ok := c.byteOffset(n)
		if n < 0 || n >= len(starts) {
			if ok {
				t.Fatalf("byteOffset(%d) = %d, true; want false", n, got)
			}
			continue
		}
		if !ok || got != starts[n] {
			t.Fatalf("byteOffset(%d) = %d, %v; want %d, true", n, got, ok, starts[n])
		}
	}
}
