package embed

import (
	"context"
	"fmt"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// Hybrid embeds every text twice: sparsely with the lexical BM25 embedder
// and densely with another embedder (an OpenAI-compatible endpoint), so a
// store that supports it can search both and fuse the rankings.
type Hybrid struct {
	Lexical *bm25.Lexical
	Dense   Embedder
}

var (
	_ Embedder = (*Hybrid)(nil)
	_ Fitter   = (*Hybrid)(nil)
	_ Embedder = (*bm25.Lexical)(nil)
	_ Fitter   = (*bm25.Lexical)(nil)
)

// Fit fits the lexical part; the dense part learns nothing from the corpus.
func (h *Hybrid) Fit(texts []string) error { return h.Lexical.Fit(texts) }

// EmbedDocuments returns, for each text, its sparse and its dense vector.
func (h *Hybrid) EmbedDocuments(ctx context.Context, texts []string) ([]vector.Vector, error) {
	sparse, err := h.Lexical.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, err
	}
	dense, err := h.Dense.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(dense) != len(sparse) {
		return nil, fmt.Errorf("dense embedder returned %d vectors for %d texts", len(dense), len(sparse))
	}
	for i := range sparse {
		sparse[i].Dense = dense[i].Dense
	}
	return sparse, nil
}

// EmbedQuery returns the query's sparse and dense vectors.
func (h *Hybrid) EmbedQuery(ctx context.Context, text string) (vector.Vector, error) {
	v, err := h.Lexical.EmbedQuery(ctx, text)
	if err != nil {
		return v, err
	}
	d, err := h.Dense.EmbedQuery(ctx, text)
	if err != nil {
		return v, err
	}
	v.Dense = d.Dense
	return v, nil
}

// LexicalPart returns the BM25 embedder inside e: e itself, or the sparse
// half of a hybrid; nil when e has none.
func LexicalPart(e Embedder) *bm25.Lexical {
	switch e := e.(type) {
	case *bm25.Lexical:
		return e
	case *Hybrid:
		return e.Lexical
	}
	return nil
}

// DensePart returns what embeds e's texts besides its BM25 part: e itself
// when it has no BM25 part, the dense half of a hybrid, nil for the
// lexical embedder alone.
func DensePart(e Embedder) Embedder {
	switch e := e.(type) {
	case *bm25.Lexical:
		return nil
	case *Hybrid:
		return e.Dense
	}
	return e
}
