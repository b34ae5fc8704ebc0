package indexer_test

import (
	"context"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// An index of each declared strategy merges overlapping parents exactly
// when the strategy declares that they overlap, and so does its
// retriever; the flat baselines never merge.
func TestIndexMergesOverlapsAsTheStrategyDeclares(t *testing.T) {
	b := testBuilder(t, 200, 50)
	splitters := map[string]hierarchy.DocumentSplitter{
		"flat children": hierarchy.FlatChildren{Builder: b}, "flat parents": hierarchy.FlatParents{Builder: b},
	}
	want := map[string]bool{}
	for _, s := range chunking.Strategies() {
		sb := *b
		sb.Strategy, sb.Window = s, 1
		splitters[string(s)], want[string(s)] = &sb, s.ParentsOverlap()
	}
	for name, splitter := range splitters {
		ix, err := indexer.Build(context.Background(), testDocs(3), splitter, newLexical(t), indexer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if ix.ParentsOverlap != want[name] || ix.Retriever().MergeOverlaps != want[name] {
			t.Errorf("%s: index says parents overlap %v, its retriever merges %v, want %v", name, ix.ParentsOverlap, ix.Retriever().MergeOverlaps, want[name])
		}
	}
}
