package embed

import (
	"context"
	"testing"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// fixedDense embeds every text as its length, one dimension.
type fixedDense struct{}

func (fixedDense) EmbedDocuments(_ context.Context, texts []string) ([]vector.Vector, error) {
	out := make([]vector.Vector, len(texts))
	for i, t := range texts {
		out[i] = vector.Vector{Dense: []float32{float32(len(t))}}
	}
	return out, nil
}

func (fixedDense) EmbedQuery(_ context.Context, text string) (vector.Vector, error) {
	return vector.Vector{Dense: []float32{float32(len(text))}}, nil
}

func TestHybridCarriesBothVectors(t *testing.T) {
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	h := &Hybrid{Lexical: lex, Dense: fixedDense{}}
	texts := []string{"tides follow the moon", "bread needs yeast"}
	if err := h.Fit(texts); err != nil {
		t.Fatal(err)
	}
	docs, err := h.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	q, err := h.EmbedQuery(context.Background(), "moon tides")
	if err != nil {
		t.Fatal(err)
	}
	if docs[0].Sparse == nil || len(docs[0].Dense) != 1 || docs[1].Dense[0] != float32(len(texts[1])) || q.Sparse == nil || len(q.Dense) != 1 {
		t.Fatalf("vectors lack a part: docs %+v query %+v", docs, q)
	}
	if q.Sparse.Dot(*docs[0].Sparse) <= q.Sparse.Dot(*docs[1].Sparse) {
		t.Fatal("the sparse part does not rank the matching text first")
	}
}
