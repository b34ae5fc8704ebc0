package indexer

import (
	"context"
	"fmt"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/vector"
	"github.com/parentrag/parentrag/internal/retrieval/vectorstore"
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
// of the current batch are kept.
type vectorizer struct {
	lex      *embed.Lexical
	dense    embed.Embedder
	weight   float32
	contexts map[string]vector.Vector
	scratch  embed.AnalysisScratch
}

// newVectorizer splits e into its BM25 and other parts.
func newVectorizer(e embed.Embedder, weight float32) *vectorizer {
	return &vectorizer{lex: embed.LexicalPart(e), dense: embed.DensePart(e), weight: weight}
}

// records returns the records of the children of batch, in order.
func (v *vectorizer) records(ctx context.Context, batch []slot) ([]vectorstore.Record, error) {
	vecs, err := v.embed(ctx, len(batch), func(i int) *embed.Analysis { return batch[i].childTerms() }, func(i int) string { return batch[i].text() })
	if err != nil {
		return nil, fmt.Errorf("embedding children: %w", err)
	}
	if err := v.addContexts(ctx, batch, vecs); err != nil {
		return nil, err
	}
	records := make([]vectorstore.Record, len(batch))
	for i, s := range batch {
		c, p := &s.u.Children[s.child], &s.u.Parents[s.parent]
		records[i] = vectorstore.Record{ID: c.ID, ParentID: c.ParentID, DocID: c.DocID, Ordinal: c.Ordinal, Vector: vecs[i], Text: c.Text}
		if len(p.Metadata) > 0 {
			records[i].Metadata = p.Metadata
		}
	}
	return records, nil
}

// addContexts replaces vecs[i] with vecs[i] + weight·context(batch[i]),
// embedding in one call the contexts of the batch's parents not kept from
// the previous batch.
func (v *vectorizer) addContexts(ctx context.Context, batch []slot, vecs []vector.Vector) error {
	if v.weight <= 0 {
		return nil
	}
	kept := map[string]vector.Vector{}
	var missing []slot
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
		cvecs, err := v.embed(ctx, len(missing), func(i int) *embed.Analysis { return missing[i].contextTerms() }, func(i int) string { return missing[i].u.contextText(missing[i].parent) })
		if err != nil {
			return fmt.Errorf("embedding child contexts: %w", err)
		}
		for i, s := range missing {
			kept[s.u.Parents[s.parent].ID] = cvecs[i]
		}
	}
	v.contexts = kept
	for i, s := range batch {
		vecs[i] = vecs[i].AddScaled(kept[s.u.Parents[s.parent].ID], v.weight)
	}
	return nil
}

// embed returns the vectors of n texts: BM25 from analysis(i), the rest
// from embedding text(i).
func (v *vectorizer) embed(ctx context.Context, n int, analysis func(int) *embed.Analysis, text func(int) string) ([]vector.Vector, error) {
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
	if v.lex == nil {
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		sp, err := v.lex.EmbedAnalysis(analysis(i), &v.scratch)
		if err != nil {
			return nil, err
		}
		out[i].Sparse = sp
	}
	return out, nil
}

// childTerms is the analysis of the slot's child.
func (s slot) childTerms() *embed.Analysis { return &s.u.ChildTerms[s.child] }

// contextTerms is the analysis of the context of the slot's parent.
func (s slot) contextTerms() *embed.Analysis { return &s.u.ContextTerms[s.parent] }

// text is the embedded text of the slot's child.
func (s slot) text() string {
	heading := ""
	if hp := s.u.Parents[s.parent].HeadingPath; len(hp) > 0 {
		heading = hp[len(hp)-1]
	}
	return childText(s.u.Children[s.child], heading)
}
