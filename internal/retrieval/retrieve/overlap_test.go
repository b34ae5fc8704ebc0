package retrieve_test

import (
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// windowIndex indexes docs as sentence windows of w sentences each side.
func windowIndex(t *testing.T, w int, docs ...hierarchy.Document) *indexer.Index {
	t.Helper()
	child, err := split.NewRecursive(split.DefaultOptions(200, 0))
	if err != nil {
		t.Fatal(err)
	}
	b := &hierarchy.Builder{Strategy: chunking.SentenceWindow, Revision: "test", Child: child, Window: w}
	return buildIndex(t, docs, b, indexer.Options{})
}

const countingText = "One apple fell. Second pear ripened. Third plum dropped. Fourth fig split. Fifth kiwi rolled. Sixth lime waited. Seventh date dried. Eighth melon grew. Ninth grape burst. Tenth lemon soured."

func TestOverlappingWindowsAreReturnedOnce(t *testing.T) {
	ix := windowIndex(t, 1, hierarchy.Document{ID: "count", Text: countingText},
		hierarchy.Document{ID: "other", Text: "A second opinion helps. Nothing else here."})
	for _, agg := range []retrieve.Aggregation{retrieve.AggregateMax, retrieve.AggregateSum} {
		res := mustRetrieve(t, ix.Retriever(), "second third fourth", retrieve.Options{MaxParents: 3, Aggregation: agg})
		var count []retrieve.Result
		for _, r := range res {
			if r.DocID == "count" {
				count = append(count, r)
			}
		}
		if len(count) != 1 {
			t.Fatalf("%s: %d results from the counting document, want one window covering the three hits: %+v", agg, len(count), res)
		}
		got := count[0]
		if want := "One apple fell. Second pear ripened. Third plum dropped. Fourth fig split. Fifth kiwi rolled."; got.Text != want || got.Start != 0 {
			t.Errorf("%s: merged window = %q at %d, want %q at 0", agg, got.Text, got.Start, want)
		}
		if len(got.Matches) != 3 {
			t.Errorf("%s: merged window has %d matches, want the three hit sentences", agg, len(got.Matches))
		}
		var sum float32
		for _, m := range got.Matches {
			if m.Start < 0 || string([]rune(got.Text)[m.Start:m.End]) == "" {
				t.Errorf("%s: match %+v does not locate its sentence", agg, m)
			}
			sum += m.Score
		}
		if agg == retrieve.AggregateSum && !close32(got.Score, sum) {
			t.Errorf("Sum: merged score %v, want the sum of its matches %v", got.Score, sum)
		}
		if len(res) < 2 || res[1].DocID != "other" {
			t.Errorf("%s: the merge left room for another parent, want the other document second: %+v", agg, docIDs(res))
		}
	}
}

func TestDistantWindowsStaySeparate(t *testing.T) {
	ix := windowIndex(t, 1, hierarchy.Document{ID: "count", Text: countingText})
	res := mustRetrieve(t, ix.Retriever(), "apple lemon", retrieve.Options{MaxParents: 3})
	if len(res) != 2 {
		t.Fatalf("got %d results, want the two windows, far apart: %+v", len(res), res)
	}
	for _, r := range res {
		if strings.Count(r.Text, ".") != 2 {
			t.Errorf("window %q is not one hit sentence and its neighbour", r.Text)
		}
	}
}

func TestMergedWindowsRespectTheBudget(t *testing.T) {
	ix := windowIndex(t, 1, hierarchy.Document{ID: "count", Text: countingText})
	res := mustRetrieve(t, ix.Retriever(), "second third fourth", retrieve.Options{MaxParents: 3, Budget: 60})
	total := 0
	for _, r := range res {
		total += len([]rune(r.Text))
	}
	if len(res) != 1 || total > 60 {
		t.Errorf("budget 60: %d results of %d code points, want one within the budget: %+v", len(res), total, res)
	}
}

func close32(a, b float32) bool { d := a - b; return d < 1e-4 && d > -1e-4 }

func TestOverlappingChunksOfOtherIndexesAreNotMerged(t *testing.T) {
	b := newBuilder(t, 1000, 40, 20) // children overlap by up to 20 code points
	ix := buildIndex(t, []hierarchy.Document{{ID: "count", Text: countingText}}, hierarchy.FlatChildren{Builder: b}, indexer.Options{})
	if ix.ParentsOverlap {
		t.Fatal("a flat-children index says its parents overlap")
	}
	res := mustRetrieve(t, ix.Retriever(), "second third fourth", retrieve.Options{MaxParents: 3})
	if len(res) < 2 {
		t.Errorf("got %d results, want the overlapping children returned as they are: %+v", len(res), res)
	}
}
