package server

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/parentrag/parentrag/internal/embedtest"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
)

// TestEmbeddingEndpointIsMeasured sends queries through a real
// OpenAI-compatible endpoint that accepts one API key: a query embedded
// with it counts as ok, one refused by the endpoint as error, and both
// are timed; a lexical bundle sends nothing and counts nothing.
func TestEmbeddingEndpointIsMeasured(t *testing.T) {
	endpoint := embedtest.Start(t, embedtest.Options{APIKey: "right", Model: "m", Embed: func(string) []float32 { return []float32{1, 0} }})
	reg := prometheus.NewRegistry()
	s := New(Options{Registry: reg})
	ts := newTestServer(t, s)
	lexical := openBundle(t, corpus(), "lexical")
	s.SetBundle(lexical)
	if code, body := do(t, ts.Client(), http.MethodPost, ts.URL+"/v1/retrieve", `{"query":"rollback"}`); code != http.StatusOK {
		t.Fatalf("lexical query: %d %s", code, body)
	}
	for _, key := range []string{"right", "wrong"} {
		b := openBundle(t, corpus(), "dense-"+key)
		client, err := embed.NewOpenAI(embed.OpenAIOptions{Endpoint: endpoint.URL, Model: "m", APIKey: key, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		b.Manifest.Embedder.Kind = bundle.EmbedderOpenAI
		b.Retriever.Embedder = client
		s.SetBundle(b)
		do(t, ts.Client(), http.MethodPost, ts.URL+"/v1/retrieve", `{"query":"rollback"}`)
	}
	for outcome, want := range map[string]float64{embeddingOK: 1, embeddingError: 1, embeddingCancelled: 0} {
		if got := testutil.ToFloat64(s.embedding.requests.WithLabelValues(outcome)); got != want {
			t.Errorf("parentrag_embedding_requests_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
	if n := testutil.CollectAndCount(reg, "parentrag_embedding_request_duration_seconds"); n != 1 {
		t.Fatalf("duration series: %d", n)
	}
	if got := histogramCount(t, reg, "parentrag_embedding_request_duration_seconds"); got != 2 {
		t.Errorf("embedding durations observed: %d, want 2", got)
	}
}

// histogramCount returns the sample count of the histogram name in reg.
func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}
