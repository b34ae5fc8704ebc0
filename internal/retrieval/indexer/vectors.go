package indexer

import (
	"context"
	"fmt"
	"slices"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
)

// slot is one child of the index: the child-th child of unit u, whose
// parent is the unit's parent-th.
type slot struct {
	u             *Unit
	child, parent int
}

// vectorizer turns batches of children into records. The BM25 part of the
// embedder weighs the analyses of the units arithmetically; any other part
// embeds the texts. With a context weight, each child's vector gains its
// parent's context vector times the weight; each parent's context is
// embedded once, as children come in document order and only the parents
// of the current batch are kept. The BM25 vectors of one batch share two
// arrays, which the next batch reuses, as it reuses the vectorizer's other
// buffers: a store keeps nothing of what it is given (see
// index.Writer's Upsert).
type vectorizer struct {
	lex      *bm25.Lexical
	dense    embed.Embedder
	weight   float32
	contexts map[string]vector.Vector // by parent id: the previous batch's parents
	spare    map[string]vector.Vector // the map before, cleared for the next batch
	missing  []slot                   // the batch's children whose parent's context is not kept
	per      []vector.Vector          // the context of each child of the batch
	children vector.Sparse            // the BM25 child vectors of the batch, end to end
	shared   vector.Sparse            // the batch's BM25 vectors, context added, end to end
	sparse   []vector.Sparse          // each child's part of shared
	ends     []int                    // where each child's entries end in children
	scratch  bm25.AnalysisScratch
}

// newVectorizer splits e into its BM25 and other parts.
func newVectorizer(e embed.Embedder, weight float32) *vectorizer {
	return &vectorizer{lex: embed.LexicalPart(e), dense: embed.DensePart(e), weight: weight}
}

// records returns the records of the children of batch, in order.
func (v *vectorizer) records(ctx context.Context, batch []slot) ([]index.Record, error) {
	vecs, err := v.embedDense(ctx, len(batch), func(i int) string { return batch[i].text() })
	if err != nil {
		return nil, fmt.Errorf("embedding children: %w", err)
	}
	contexts, err := v.contextsOf(ctx, batch)
	if err != nil {
		return nil, err
	}
	if err := v.addSparse(batch, vecs, contexts); err != nil {
		return nil, fmt.Errorf("embedding children: %w", err)
	}
	records := make([]index.Record, len(batch))
	for i, s := range batch {
		if contexts != nil {
			vecs[i] = v.addContext(vecs[i], contexts[i])
		}
		c, p := &s.u.Children[s.child], &s.u.Parents[s.parent]
		records[i] = index.Record{ID: c.ID, ParentID: c.ParentID, DocID: c.DocID, Ordinal: c.Ordinal, Vector: vecs[i], Text: c.Text}
		if len(p.Metadata) > 0 {
			records[i].Metadata = p.Metadata
		}
	}
	return records, nil
}

// addSparse sets each vecs[i].Sparse to the BM25 vector of batch[i]'s
// child plus, when contexts is not nil, weight times contexts[i].Sparse:
// what vector.Vector.AddScaled gives, entry for entry, in two arrays
// shared by the batch and reused by the next. It does nothing without a
// BM25 part.
func (v *vectorizer) addSparse(batch []slot, vecs, contexts []vector.Vector) error {
	if v.lex == nil {
		return nil
	}
	v.children = vector.Sparse{Indices: v.children.Indices[:0], Values: v.children.Values[:0]}
	v.ends = v.ends[:0]
	size := 0
	for i, s := range batch {
		var err error
		if v.children, err = v.lex.AppendAnalysis(v.children, s.childTerms(), &v.scratch); err != nil {
			return err
		}
		v.ends = append(v.ends, len(v.children.Indices))
		if contexts != nil {
			size += len(contexts[i].Sparse.Indices)
		}
	}
	size += len(v.children.Indices)
	shared := vector.Sparse{Indices: slices.Grow(v.shared.Indices[:0], size), Values: slices.Grow(v.shared.Values[:0], size)}
	sparse := slices.Grow(v.sparse[:0], len(batch))[:len(batch)]
	start := 0
	for i, end := range v.ends {
		child := vector.Sparse{Indices: v.children.Indices[start:end], Values: v.children.Values[start:end]}
		var context vector.Sparse // none: the child's entries alone
		if contexts != nil {
			context = *contexts[i].Sparse
		}
		from := len(shared.Indices)
		shared = vector.AppendScaled(shared, child, context, v.weight)
		to := len(shared.Indices)
		sparse[i] = vector.Sparse{Indices: shared.Indices[from:to:to], Values: shared.Values[from:to:to]}
		vecs[i].Sparse = &sparse[i]
		start = end
	}
	v.shared, v.sparse = shared, sparse
	return nil
}

// addContext returns vec + weight·context as vector.Vector.AddScaled
// does, for a vec whose BM25 part addSparse already summed.
func (v *vectorizer) addContext(vec, context vector.Vector) vector.Vector {
	if v.lex == nil {
		return vec.AddScaled(context, v.weight)
	}
	sum := vector.Vector{Dense: vec.Dense}.AddScaled(vector.Vector{Dense: context.Dense}, v.weight)
	sum.Sparse = vec.Sparse
	return sum
}

// contextsOf returns the context vector of each child's parent, embedding
// in one call the contexts of the batch's parents not kept from the
// previous batch, or nil without a context weight. The slice is reused by
// the next call.
func (v *vectorizer) contextsOf(ctx context.Context, batch []slot) ([]vector.Vector, error) {
	if v.weight <= 0 {
		return nil, nil
	}
	kept := v.spare
	if kept == nil {
		kept = map[string]vector.Vector{}
	}
	clear(kept)
	missing := v.missing[:0]
	for _, s := range batch {
		id := s.u.Parents[s.parent].ID
		if _, ok := kept[id]; ok {
			continue
		}
		if vec, ok := v.contexts[id]; ok {
			kept[id] = vec
			continue
		}
		kept[id] = vector.Vector{}
		missing = append(missing, s)
	}
	if len(missing) > 0 {
		cvecs, err := v.embedContexts(ctx, missing)
		if err != nil {
			return nil, fmt.Errorf("embedding child contexts: %w", err)
		}
		for i, s := range missing {
			kept[s.u.Parents[s.parent].ID] = cvecs[i]
		}
	}
	clear(missing) // drops the units
	v.missing = missing[:0]
	v.contexts, v.spare = kept, v.contexts
	v.per = v.per[:0]
	for _, s := range batch {
		v.per = append(v.per, kept[s.u.Parents[s.parent].ID])
	}
	return v.per, nil
}

// embedContexts returns the vectors of the contexts of the parents of
// slots: BM25 from their analyses, the rest from embedding their texts.
func (v *vectorizer) embedContexts(ctx context.Context, slots []slot) ([]vector.Vector, error) {
	out, err := v.embedDense(ctx, len(slots), func(i int) string { return slots[i].u.contextText(slots[i].parent) })
	if err != nil || v.lex == nil {
		return out, err
	}
	for i, s := range slots {
		if out[i].Sparse, err = v.lex.EmbedAnalysis(s.contextTerms(), &v.scratch); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// embedDense returns n vectors holding the embeddings of text(i) by the
// part of the embedder that is not BM25, if any, and fails once ctx is
// done.
func (v *vectorizer) embedDense(ctx context.Context, n int, text func(int) string) ([]vector.Vector, error) {
	out := make([]vector.Vector, n)
	if v.dense != nil {
		texts := make([]string, n)
		for i := range texts {
			texts[i] = text(i)
		}
		dense, err := v.dense.EmbedDocuments(ctx, texts)
		if err != nil {
			return nil, err
		}
		if len(dense) != n {
			return nil, fmt.Errorf("dense embedder returned %d vectors for %d texts", len(dense), n)
		}
		copy(out, dense)
	}
	return out, ctx.Err()
}

// childTerms is the analysis of the slot's child.
func (s slot) childTerms() *bm25.Analysis { return &s.u.ChildTerms[s.child] }

// contextTerms is the analysis of the context of the slot's parent.
func (s slot) contextTerms() *bm25.Analysis { return &s.u.ContextTerms[s.parent] }

// text is the embedded text of the slot's child.
func (s slot) text() string {
	heading := ""
	if hp := s.u.Parents[s.parent].HeadingPath; len(hp) > 0 {
		heading = hp[len(hp)-1]
	}
	return childText(s.u.Children[s.child], heading)
}
