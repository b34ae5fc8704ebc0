package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval"
	"github.com/parentrag/parentrag/internal/retrieval/rerank/reranktest"
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
	env, bin, corpus, retriever := startSamples(t, ctx, ns)
	get := func(obj client.Object) error { return env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj) }
	eventually(t, time.Duration(waitMinutes())*time.Minute, "the Corpus to be Ready", func() bool { return get(corpus) == nil && ready(corpus.Status.Conditions) })
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := get(retriever); err != nil {
			return err
		}
		retriever.Spec.Rerank = &v1alpha1.RetrieverRerank{URL: reranker.URL, TopN: 10}
		return env.Client.Update(ctx, retriever)
	})
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	eventually(t, time.Minute, "the Deployment with its reranker", func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(retriever), &d) == nil &&
			slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--rerank-url="+reranker.URL)
	})
	srv, err := env.StartServe(ctx, bin, &d)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := srv.WaitReady(60 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, srv.Log())
	}

	results := retrieveResults(t, ctx, srv.URL)
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
	fallback := retrieveResults(t, ctx, srv.URL)
	if fallback[0].Score == float32(reranktest.Score(word, fallback[0].Text)) && fallback[0].ParentID == results[0].ParentID {
		t.Errorf("with the reranker down the answer is still the reranked one: %+v", fallback[0])
	}
	code, metrics := call(t, ctx, srv.URL+"/metrics", "GET", "", "")
	if code != 200 || !strings.Contains(metrics, "parentrag_rerank_fallbacks_total 1") {
		t.Errorf("/metrics (%d) does not count one fallback:\n%s", code, grepLines(metrics, "rerank"))
	}
}

// retrieveResults asks the server the e2e question for 3 parents and
// returns them, failing unless it answers 200 with some.
func retrieveResults(t *testing.T, ctx context.Context, url string) []retrieval.Result {
	t.Helper()
	code, body := call(t, ctx, url+"/v1/retrieve", "POST", "", fmt.Sprintf(`{"query": %q, "maxParents": 3}`, question))
	var resp struct{ Results []retrieval.Result }
	if err := json.Unmarshal([]byte(body), &resp); code != 200 || err != nil || len(resp.Results) == 0 {
		t.Fatalf("POST /v1/retrieve: %d %s (%v)", code, body, err)
	}
	return resp.Results
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
