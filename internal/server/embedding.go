package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
)

// Outcomes of parentrag_embedding_requests_total.
const (
	embeddingOK        = "ok"
	embeddingError     = "error"
	embeddingCancelled = "cancelled"
)

// embeddingMetrics count and time the query embeddings sent to an
// embedding endpoint.
type embeddingMetrics struct {
	requests *prometheus.CounterVec
	duration prometheus.Histogram
}

// newEmbeddingMetrics registers, or finds, the embedding series in reg,
// each outcome at zero so that a rate of errors exists before the first.
func newEmbeddingMetrics(reg *prometheus.Registry) *embeddingMetrics {
	m := &embeddingMetrics{
		requests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parentrag_embedding_requests_total",
			Help: "Query embeddings asked of the embedding endpoint (openai and hybrid embedders), by outcome: ok, error (the endpoint failed after its retries), cancelled (the query was cancelled or timed out first).",
		}, []string{"outcome"})),
		duration: register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parentrag_embedding_request_duration_seconds",
			Help:    "Time the embedding endpoint took to embed a query, retries included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		})),
	}
	for _, o := range []string{embeddingOK, embeddingError, embeddingCancelled} {
		m.requests.WithLabelValues(o)
	}
	return m
}

// withEmbeddingMetrics makes b's retriever count and time its query
// embeddings when they go to an embedding endpoint; a lexical bundle is
// left as it is.
func (s *Server) withEmbeddingMetrics(b *bundle.Bundle) {
	kind := b.Manifest.Embedder.Kind
	if b.Retriever == nil || (kind != bundle.EmbedderOpenAI && kind != bundle.EmbedderHybrid) {
		return
	}
	r := *b.Retriever
	r.Embedder = &measuredEmbedder{Embedder: r.Embedder, m: s.embedding}
	b.Retriever = &r
}

// measuredEmbedder records each EmbedQuery of the embedder it wraps.
type measuredEmbedder struct {
	embed.Embedder
	m *embeddingMetrics
}

// EmbedQuery embeds text and records the call's outcome and time.
func (e *measuredEmbedder) EmbedQuery(ctx context.Context, text string) (vector.Vector, error) {
	start := time.Now()
	v, err := e.Embedder.EmbedQuery(ctx, text)
	e.m.duration.Observe(time.Since(start).Seconds())
	outcome := embeddingOK
	switch {
	case err != nil && ctx.Err() != nil:
		outcome = embeddingCancelled
	case err != nil:
		outcome = embeddingError
	}
	e.m.requests.WithLabelValues(outcome).Inc()
	return v, err
}
