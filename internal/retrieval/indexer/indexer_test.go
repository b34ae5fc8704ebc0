package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

func testBuilder(tb testing.TB, parentSize, childSize int) *hierarchy.Builder {
	tb.Helper()
	parent, err := split.NewRecursive(split.DefaultOptions(parentSize, 0))
	if err != nil {
		tb.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(childSize, childSize/10))
	if err != nil {
		tb.Fatal(err)
	}
	return &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "r1", Parent: parent, Child: child}
}

func newLexical(tb testing.TB) *bm25.Lexical {
	tb.Helper()
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		tb.Fatal(err)
	}
	return lex
}

// testDocs returns n deterministic documents of a few paragraphs whose
// lengths vary, so that workers finish out of order.
func testDocs(n int) []hierarchy.Document {
	words := strings.Fields("river stone bridge lantern harbor meadow copper violet anchor summit willow ember " +
		"falcon orchard glacier canyon marble thistle beacon cobalt prairie saffron quartz tundra")
	docs := make([]hierarchy.Document, n)
	for i := range docs {
		var paras []string
		for p := range 1 + (i*7)%5 {
			var sb strings.Builder
			for w := range 20 + (i*13+p*5)%60 {
				if w > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(words[(i*31+p*17+w*w)%len(words)])
			}
			sb.WriteByte('.')
			paras = append(paras, sb.String())
		}
		docs[i] = hierarchy.Document{ID: fmt.Sprintf("doc-%03d", i), Title: words[i%len(words)], Text: strings.Join(paras, "\n\n")}
	}
	return docs
}

func build(tb testing.TB, docs []hierarchy.Document, opts indexer.Options) *indexer.Index {
	tb.Helper()
	ix, err := indexer.Build(context.Background(), docs, testBuilder(tb, 300, 60), newLexical(tb), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

// searchAll returns the hits of a few queries, the observable index.
func searchAll(tb testing.TB, ix *indexer.Index) [][]index.Hit {
	tb.Helper()
	var out [][]index.Hit
	for _, q := range []string{"river stone", "copper violet anchor", "glacier", "saffron quartz tundra beacon"} {
		qv, err := ix.Embedder.EmbedQuery(context.Background(), q)
		if err != nil {
			tb.Fatal(err)
		}
		hits, err := ix.Store.(index.Searcher).Search(context.Background(), index.SearchRequest{Vector: qv, TopK: 50})
		if err != nil {
			tb.Fatal(err)
		}
		if len(hits) == 0 {
			tb.Fatalf("query %q matched nothing", q)
		}
		out = append(out, hits)
	}
	return out
}

func TestBuildIsDeterministicWhateverTheWorkers(t *testing.T) {
	docs := testDocs(80)
	for _, weight := range []float32{0, 0.8} {
		one := build(t, docs, indexer.Options{Workers: 1, ContextWeight: weight})
		four := build(t, docs, indexer.Options{Workers: 4, ContextWeight: weight})
		// Small batches cross parent boundaries, exercising the context cache.
		small := build(t, docs, indexer.Options{Workers: 3, BatchSize: 7, ContextWeight: weight})
		if len(one.Parents) <= len(docs) || len(one.Children) <= len(one.Parents) {
			t.Fatalf("premise: %d docs, %d parents, %d children", len(docs), len(one.Parents), len(one.Children))
		}
		for name, other := range map[string]*indexer.Index{"4 workers": four, "batch 7": small} {
			if !reflect.DeepEqual(one.Parents, other.Parents) {
				t.Errorf("weight %v, %s: parents differ from 1 worker", weight, name)
			}
			if !reflect.DeepEqual(one.Children, other.Children) {
				t.Errorf("weight %v, %s: children differ from 1 worker", weight, name)
			}
			if !reflect.DeepEqual(searchAll(t, one), searchAll(t, other)) {
				t.Errorf("weight %v, %s: search results differ from 1 worker", weight, name)
			}
			if embeddedStats(one) != embeddedStats(other) {
				t.Errorf("weight %v, %s: store stats %+v, 1 worker %+v", weight, name, embeddedStats(other), embeddedStats(one))
			}
		}
		// Parents and children come in document order.
		for i := 1; i < len(one.Children); i++ {
			if one.Children[i].DocID < one.Children[i-1].DocID {
				t.Fatalf("children out of document order at %d", i)
			}
		}
	}
}

func TestBuildIndexesOnlyChildren(t *testing.T) {
	docs := testDocs(10)
	ix := build(t, docs, indexer.Options{})
	n, err := ix.Store.(index.Searcher).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != len(ix.Children) {
		t.Fatalf("store holds %d records, index has %d children", n, len(ix.Children))
	}
	parents := map[string]bool{}
	for _, p := range ix.Parents {
		parents[p.ID] = true
	}
	for _, c := range ix.Children {
		if !parents[c.ParentID] {
			t.Errorf("child %s points to missing parent %s", c.ID, c.ParentID)
		}
		if parents[c.ID] {
			t.Errorf("child id %s is also a parent id", c.ID)
		}
	}
	if ix.Documents != len(docs) {
		t.Errorf("Documents = %d, want %d", ix.Documents, len(docs))
	}
	var _ *retrieve.Retriever = ix.Retriever()
}

func TestBuildReportsProgress(t *testing.T) {
	docs := testDocs(25)
	var events []indexer.Progress
	ix := build(t, docs, indexer.Options{Workers: 3, BatchSize: 10, OnProgress: func(p indexer.Progress) { events = append(events, p) }})
	want := map[string]int{indexer.StageSplit: len(docs), indexer.StageFit: len(ix.Children), indexer.StageEmbed: len(ix.Children)}
	last := map[string]indexer.Progress{}
	var order []string
	for _, e := range events {
		prev, seen := last[e.Stage]
		if !seen {
			order = append(order, e.Stage)
		} else if e.Done < prev.Done {
			t.Errorf("%s went back from %d to %d", e.Stage, prev.Done, e.Done)
		}
		if e.Total != want[e.Stage] || e.Done > e.Total || e.Done < 1 {
			t.Errorf("event %+v, want total %d", e, want[e.Stage])
		}
		last[e.Stage] = e
	}
	if !reflect.DeepEqual(order, []string{indexer.StageSplit, indexer.StageFit, indexer.StageEmbed}) {
		t.Fatalf("stages in order %v", order)
	}
	for stage, total := range want {
		if last[stage].Done != total {
			t.Errorf("%s ended at %d of %d", stage, last[stage].Done, total)
		}
	}
	if n := countStage(events, indexer.StageEmbed); n != (len(ix.Children)+9)/10 {
		t.Errorf("%d embed events for %d children in batches of 10", n, len(ix.Children))
	}
	if n := countStage(events, indexer.StageSplit); n != len(docs) {
		t.Errorf("%d split events for %d documents", n, len(docs))
	}
}

func countStage(events []indexer.Progress, stage string) int {
	n := 0
	for _, e := range events {
		if e.Stage == stage {
			n++
		}
	}
	return n
}

func TestBuildStopsWhenCancelled(t *testing.T) {
	docs := testDocs(40)
	b := testBuilder(t, 300, 60)
	t.Run("before start", func(t *testing.T) {
		// Repeated, since a cancelled context races with finished work; an
		// empty corpus has no embedding step that would notice on its own.
		for _, corpus := range [][]hierarchy.Document{docs, {{ID: "empty", Text: ""}}} {
			for range 30 {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				ix, err := indexer.Build(ctx, corpus, b, newLexical(t), indexer.Options{Workers: 2})
				if !errors.Is(err, context.Canceled) || ix != nil {
					t.Fatalf("%d docs: got %v, %v; want context.Canceled and no index", len(corpus), ix, err)
				}
			}
		}
	})
	t.Run("after the last document", func(t *testing.T) {
		// Cancelled once splitting is done: the build must not report
		// success, even when there is nothing to embed that would notice.
		for _, corpus := range [][]hierarchy.Document{docs, {{ID: "empty", Text: "  "}}} {
			ctx, cancel := context.WithCancel(context.Background())
			opts := indexer.Options{OnProgress: func(p indexer.Progress) {
				if p.Stage == indexer.StageSplit && p.Done == p.Total {
					cancel()
				}
			}}
			ix, err := indexer.Build(ctx, corpus, b, newLexical(t), opts)
			cancel()
			if !errors.Is(err, context.Canceled) || ix != nil {
				t.Errorf("%d docs: got %v, %v; want context.Canceled and no index", len(corpus), ix, err)
			}
		}
	})
	for _, stage := range []string{indexer.StageSplit, indexer.StageEmbed} {
		t.Run("during "+stage, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var after []indexer.Progress
			cancelled := false
			opts := indexer.Options{Workers: 2, BatchSize: 5, OnProgress: func(p indexer.Progress) {
				if cancelled {
					after = append(after, p)
				}
				if p.Stage == stage && !cancelled {
					cancelled = true
					cancel()
				}
			}}
			ix, err := indexer.Build(ctx, docs, b, newLexical(t), opts)
			if !errors.Is(err, context.Canceled) || ix != nil {
				t.Fatalf("got %v, %v; want context.Canceled and no index", ix, err)
			}
			for _, p := range after {
				if p.Stage == indexer.StageEmbed && p.Done == p.Total {
					t.Errorf("embedding finished after cancellation: %+v", p)
				}
			}
		})
	}
}

// embeddedStats returns the statistics of an index's embedded store.
func embeddedStats(ix *indexer.Index) embedded.Stats {
	return ix.Store.(*embedded.Store).Stats()
}
