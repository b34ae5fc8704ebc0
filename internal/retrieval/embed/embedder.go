// Package embed turns child texts and queries into vectors. The offline
// default is the lexical BM25 embedder of internal/index/bm25, whose sparse
// inner product is the exact BM25 score; an OpenAI-compatible HTTP client
// brings dense embeddings, a Hybrid both, and a cache keeps dense vectors
// across builds.
package embed

import (
	"context"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// Embedder embeds documents (children) and queries. EmbedDocuments returns
// exactly one vector per input text, in input order.
type Embedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([]vector.Vector, error)
	EmbedQuery(ctx context.Context, text string) (vector.Vector, error)
}

// Fitter is implemented by embedders that learn corpus statistics (such as
// document frequencies) from every text of an index before embedding it.
type Fitter interface {
	Fit(texts []string) error
}
