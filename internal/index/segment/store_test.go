package segment_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/segment"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// segmentFiles writes the analyses into segment files cut at the given
// parents and returns their paths, in order.
func segmentFiles(t *testing.T, corpus []analysedParent, cuts []int, weight float32) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	lo := 0
	for i, hi := range append(cuts, len(corpus)) {
		path := filepath.Join(dir, fmt.Sprintf("%03d.seg", i))
		if err := os.WriteFile(path, segmentBytes(t, corpus, lo, hi, weight), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
		lo = hi
	}
	return paths
}

// TestStoreAnswersAsTheEmbeddedStore checks that segment files opened as
// a Store answer every search with the embedded store's hits, whole:
// child, parent, document, ordinal and the score's bits, and count the
// same postings and children.
func TestStoreAnswersAsTheEmbeddedStore(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	corpus := randomCorpus(rng, 300)
	analysed := analyse(corpus)
	for _, weight := range []float32{0, 0.8} {
		_, want := indexedStore(t, analysed, weight)
		store, err := segment.OpenFiles(segmentFiles(t, analysed, []int{40, 41, 200}, weight), bm25.DefaultK1, bm25.DefaultB, weight)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := store.Count(ctx); err != nil || n != countChildren(analysed) {
			t.Fatalf("weight %v: count %d (%v), want %d", weight, n, err, countChildren(analysed))
		}
		for range 60 {
			text := randomQuery(rng, corpus)
			q, err := store.Set().Lexical().EmbedQuery(ctx, text)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := store.Postings(q), want.Postings(q); got != want {
				t.Fatalf("weight %v, query %q: %d postings, the embedded store counts %d", weight, text, got, want)
			}
			req := index.SearchRequest{Vector: q, TopK: []int{1, 3, 20}[rng.IntN(3)]}
			got, err := store.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			wantHits, err := want.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			sameStoreHits(t, fmt.Sprintf("weight %v, query %q", weight, text), got, wantHits)
			evenParents := func(h index.Hit) bool { return h.ParentID[len(h.ParentID)-1]%2 == 0 }
			if got, err = store.SearchFiltered(ctx, req, evenParents); err != nil {
				t.Fatal(err)
			}
			if wantHits, err = want.SearchFiltered(ctx, req, evenParents); err != nil {
				t.Fatal(err)
			}
			sameStoreHits(t, fmt.Sprintf("weight %v, query %q, filtered by parent", weight, text), got, wantHits)
		}
		if err := store.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// sameStoreHits fails unless got and want are the same hits, scores
// equal to the bit.
func sameStoreHits(t *testing.T, what string, got, want []index.Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		sameScore := math.Float32bits(g.Score) == math.Float32bits(w.Score)
		g.Score, w.Score = 0, 0
		if g != w || !sameScore {
			t.Fatalf("%s: hit %d is %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

// countChildren is the number of children of a corpus.
func countChildren(corpus []analysedParent) int {
	n := 0
	for _, p := range corpus {
		n += len(p.children)
	}
	return n
}

// TestStoreRefusesWhatItCannotServe checks the store's errors: writes, a
// dense query, a query over the postings limit, and any call after
// Close, which waits for nothing left in flight.
func TestStoreRefusesWhatItCannotServe(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	corpus := randomCorpus(rng, 30)
	store, err := segment.OpenFiles(segmentFiles(t, analyse(corpus), nil, 0.8), bm25.DefaultK1, bm25.DefaultB, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Search(ctx, index.SearchRequest{Vector: vector.Vector{Dense: []float32{1}}, TopK: 3}); !errors.Is(err, index.ErrInvalidInput) {
		t.Errorf("a dense query: error %v, want ErrInvalidInput", err)
	}
	if hits, err := store.Search(ctx, index.SearchRequest{Vector: vector.Vector{}, TopK: 3}); err != nil || len(hits) != 0 {
		t.Errorf("an empty query: %d hits, error %v; want none", len(hits), err)
	}
	q, err := store.Set().Lexical().EmbedQuery(ctx, corpus[0].context)
	if err != nil {
		t.Fatal(err)
	}
	n := store.Postings(q)
	if _, err := store.Search(ctx, index.SearchRequest{Vector: q, TopK: 3, MaxPostings: n - 1}); !errors.Is(err, index.ErrQueryTooCostly) {
		t.Errorf("a query of %d postings under a limit of %d: error %v, want ErrQueryTooCostly", n, n-1, err)
	}
	if hits, err := store.Search(ctx, index.SearchRequest{Vector: q, TopK: 3, MaxPostings: n}); err != nil || len(hits) == 0 {
		t.Errorf("a query of %d postings at a limit of %d: %d hits, error %v", n, n, len(hits), err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatalf("closing twice: %v", err)
	}
	if _, err := store.Search(ctx, index.SearchRequest{Vector: q, TopK: 3}); !errors.Is(err, index.ErrClosed) {
		t.Errorf("search after close: error %v, want ErrClosed", err)
	}
	if _, err := store.Count(ctx); !errors.Is(err, index.ErrClosed) {
		t.Errorf("count after close: error %v, want ErrClosed", err)
	}
}
