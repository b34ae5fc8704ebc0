package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// newRerankFallbacks registers the counter of queries that kept their
// first-stage order because the reranker failed.
func newRerankFallbacks(reg *prometheus.Registry) prometheus.Counter {
	return register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "parentrag_rerank_fallbacks_total",
		Help: "Queries answered in first-stage order because the reranker failed (timeout, refused connection, error answer).",
	}))
}

// withRerank gives b's retriever the server's rerank stage, counting each
// fallback before passing it to the stage's own OnFallback; without a
// stage it leaves b as it is.
func (s *Server) withRerank(b *bundle.Bundle) {
	if s.opts.Rerank == nil || b.Retriever == nil {
		return
	}
	stage := *s.opts.Rerank
	report := stage.OnFallback
	stage.OnFallback = func(err error) {
		s.rerankFallbacks.Inc()
		if report != nil {
			report(err)
		}
	}
	r := *b.Retriever
	r.Rerank = &stage
	b.Retriever = &r
}
