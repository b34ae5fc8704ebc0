package retrieve_test

import (
	"context"
	"errors"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/rerank"
	"github.com/parentrag/parentrag/internal/retrieval/rerank/reranktest"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// rerankRetriever indexes documents that BM25 ranks for "zebra" by their
// zebra-dense lines, with d low, and reranks them with a server that
// scores "stripes", which only d has.
func rerankRetriever(t testing.TB, o rerank.Options, target retrieve.RerankTarget, fallbacks *[]error) *retrieve.Retriever {
	t.Helper()
	docs := zebraDocs()
	docs[3] = lineDoc("d", "", "zebra stripes stripes stripes nectar", "pear plum quince raisin melon")
	ix := buildIndex(t, docs, lineBuilder(t), indexer.Options{})
	c, err := rerank.New(o)
	if err != nil {
		t.Fatal(err)
	}
	r := ix.Retriever()
	r.Rerank = &retrieve.Rerank{Reranker: c, Target: target, TopN: 4, OnFallback: func(err error) { *fallbacks = append(*fallbacks, err) }}
	return r
}

func TestRerankReordersParentsInBothConventions(t *testing.T) {
	tei, cohere := reranktest.NewTEI("stripes"), reranktest.NewCohere("stripes")
	defer tei.Close()
	defer cohere.Close()
	for name, o := range map[string]rerank.Options{
		"TEI":    {URL: tei.URL, Convention: rerank.TEI},
		"Cohere": {URL: cohere.URL, Convention: rerank.Cohere, Model: "rerank-v3"},
	} {
		for _, target := range []retrieve.RerankTarget{retrieve.RerankParents, retrieve.RerankChildren} {
			var fallbacks []error
			r := rerankRetriever(t, o, target, &fallbacks)
			plain := *r
			plain.Rerank = nil
			first := mustRetrieve(t, &plain, "zebra", retrieve.Options{MaxParents: 2})
			got := mustRetrieve(t, r, "zebra", retrieve.Options{MaxParents: 2})
			if len(fallbacks) != 0 {
				t.Fatalf("%s/%s: fell back: %v", name, target, fallbacks)
			}
			if first[0].DocID == "d" {
				t.Fatalf("the first stage already ranks d first: the test proves nothing")
			}
			if len(got) != 2 || got[0].DocID != "d" || got[0].Score != 3 {
				t.Errorf("%s/%s: reranked %v (top score %v), want d first with its reranker score 3", name, target, docIDs(got), got[0].Score)
			}
		}
	}
}

func TestRerankFallsBackToFirstStageWhenTheRerankerIsDown(t *testing.T) {
	down := reranktest.NewTEI("stripes")
	url := down.URL
	down.Close()
	var fallbacks []error
	r := rerankRetriever(t, rerank.Options{URL: url, Convention: rerank.TEI, Retries: -1}, retrieve.RerankParents, &fallbacks)
	plain := *r
	plain.Rerank = nil
	want := mustRetrieve(t, &plain, "zebra", retrieve.Options{MaxParents: 2})
	got, err := r.Retrieve(context.Background(), "zebra", retrieve.Options{MaxParents: 2})
	if err != nil {
		t.Fatalf("a query failed because the reranker is down: %v", err)
	}
	if len(fallbacks) != 1 || errors.Is(fallbacks[0], context.Canceled) {
		t.Errorf("fallbacks reported: %v, want one", fallbacks)
	}
	if gotIDs, wantIDs := docIDs(got), docIDs(want); len(gotIDs) != len(wantIDs) || gotIDs[0] != wantIDs[0] || gotIDs[1] != wantIDs[1] {
		t.Errorf("fallback order %v, want the first stage's %v", gotIDs, wantIDs)
	}
}

// BenchmarkRerankLatency measures what the rerank stage adds to a query:
// the same retrieval without a reranker, and with a Text Embeddings
// Inference server on the loopback interface rescoring 4 parents or their
// children. The server scores instantly, so the difference is the stage's
// own cost: encoding, one HTTP round trip and decoding.
func BenchmarkRerankLatency(b *testing.B) {
	tei := reranktest.NewTEI("stripes")
	defer tei.Close()
	var fallbacks []error
	for _, target := range []retrieve.RerankTarget{"", retrieve.RerankParents, retrieve.RerankChildren} {
		name := string(target)
		if name == "" {
			name = "none"
		}
		b.Run("rerank="+name, func(b *testing.B) {
			r := rerankRetriever(b, rerank.Options{URL: tei.URL, Convention: rerank.TEI}, target, &fallbacks)
			if target == "" {
				r.Rerank = nil
			}
			ctx := context.Background()
			for b.Loop() {
				if _, err := r.Retrieve(ctx, "zebra", retrieve.Options{MaxParents: 2}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/query")
		})
	}
	if len(fallbacks) > 0 {
		b.Fatalf("fell back %d times: %v", len(fallbacks), fallbacks[0])
	}
}
