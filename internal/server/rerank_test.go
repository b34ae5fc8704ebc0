package server

import (
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/rerank"
	"github.com/parentrag/parentrag/internal/retrieval/rerank/reranktest"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

func TestRerankServesAndFallsBackWithAMetric(t *testing.T) {
	tei := reranktest.NewTEI("basil")
	defer tei.Close()
	up, err := rerank.New(rerank.Options{URL: tei.URL, Convention: rerank.TEI})
	if err != nil {
		t.Fatal(err)
	}
	down := reranktest.NewTEI("basil")
	down.Close()
	gone, err := rerank.New(rerank.Options{URL: down.URL, Convention: rerank.TEI, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*rerank.Client{"up": up, "down": gone} {
		s := New(Options{Rerank: &retrieve.Rerank{Reranker: c, TopN: 5}})
		s.SetBundle(openBundle(t, corpus(), "rev-a"))
		ts := newTestServer(t, s)
		code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "tomatoes basil sun", "maxParents": 1}`)
		if code != 200 {
			t.Fatalf("%s: %d %s", name, code, body)
		}
		_, metrics := do(t, ts.Client(), "GET", ts.URL+"/metrics", "")
		fallbacks := strings.Contains(string(metrics), "parentrag_rerank_fallbacks_total 1")
		if fallbacks != (name == "down") {
			t.Errorf("reranker %s: fallback counted %v; metrics:\n%s", name, fallbacks, grepLines(string(metrics), "rerank"))
		}
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
