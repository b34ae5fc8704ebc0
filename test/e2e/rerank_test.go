package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/retrieval/rerank/reranktest"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// TestRetrieverRerankEndToEnd: the samples' Retriever with spec.rerank
// runs `parentrag serve` as its pod would, against a reranker that
// follows Text Embeddings Inference's API. Its answers come in the
// reranker's order with the reranker's scores; with the reranker gone,
// queries are still answered, in first-stage order, and the fallback is
// counted on /metrics.
func TestRetrieverRerankEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and builds the binary; skipped with -short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns, word = "parentrag-rerank", "revision"
	reranker := reranktest.NewTEI(word)
	defer reranker.Close()
	_, _, srv := serveChangedSamples(t, ctx, ns, func(r *v1alpha1.Retriever) {
		r.Spec.Rerank = &v1alpha1.RetrieverRerank{URL: reranker.URL, TopN: 10}
	}, "--rerank-url="+reranker.URL)

	results := retrieveResults(t, ctx, srv)
	for i, r := range results {
		if want := float32(reranktest.Score(word, r.Text)); r.Score != want {
			t.Errorf("parent %d (%s) scores %v, want the reranker's %v", i, r.ParentID, r.Score, want)
		}
		if i > 0 && r.Score > results[i-1].Score {
			t.Errorf("parent %d scores %v over parent %d's %v: not in the reranker's order", i, r.Score, i-1, results[i-1].Score)
		}
	}
	if results[0].Score == 0 {
		t.Fatalf("no reranked parent holds %q: a useless comparison\n%+v", word, results)
	}

	reranker.Close()
	fallback := retrieveResults(t, ctx, srv)
	if fallback[0].Score == float32(reranktest.Score(word, fallback[0].Text)) && fallback[0].ParentID == results[0].ParentID {
		t.Errorf("with the reranker down the answer is still the reranked one: %+v", fallback[0])
	}
	code, metrics := call(t, ctx, srv.URL+"/metrics", "GET", "", "")
	if code != 200 || !strings.Contains(metrics, "parentrag_rerank_fallbacks_total 1") {
		t.Errorf("/metrics (%d) does not count one fallback:\n%s", code, metrics)
	}
}

// retrieveResults asks the server the e2e question for 3 parents and
// returns them, failing unless it answers with some.
func retrieveResults(t *testing.T, ctx context.Context, srv *devcluster.ServeProcess) []retrieve.Result {
	t.Helper()
	resp, err := srv.Retrieve(ctx, question, 3)
	if err != nil || len(resp.Results) == 0 {
		t.Fatalf("POST /v1/retrieve: %+v (%v)", resp, err)
	}
	return resp.Results
}
