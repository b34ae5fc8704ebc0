package segment

import "github.com/parentrag/parentrag/internal/index/bm25"

// weigher weighs the postings of one segment with a set's statistics. A
// child's weight for a term is its own BM25 weight for it plus the
// context weight times its parent's context BM25 weight for it, each part
// present only where that text holds the term, in the float32 arithmetic
// of vector.AppendScaled: own, the context weight times the context's
// (rounded), or their sum (rounded).
type weigher struct {
	doc    bm25.DocWeights
	norms  []float64 // doc.Norm of each length below len(norms)
	factor float32   // the context weight
	seg    *Segment
}

// weigher returns the weigher of seg's postings.
func (s *Set) weigher(seg *Segment) weigher {
	return weigher{doc: s.weights, norms: s.norms, factor: s.contextWeight, seg: seg}
}

// maxNormTable is the most lengths a set keeps the norm of.
const maxNormTable = 1 << 16

// normTable returns doc.Norm of every length up to the longest text of
// segs (at most maxNormTable of them): the same values, looked up.
func normTable(doc bm25.DocWeights, segs []*Segment) []float64 {
	longest := uint32(0)
	for _, s := range segs {
		for _, n := range s.childTokens {
			longest = max(longest, n)
		}
		for _, n := range s.parentTokens {
			longest = max(longest, n)
		}
	}
	norms := make([]float64, min(int(longest)+1, maxNormTable))
	for n := range norms {
		norms[n] = doc.Norm(n)
	}
	return norms
}

// norm is doc.Norm(tokens).
func (w weigher) norm(tokens uint32) float64 {
	if int(tokens) < len(w.norms) {
		return w.norms[tokens]
	}
	return w.doc.Norm(int(tokens))
}

// own is the BM25 weight of a term occurring tf times in the child in
// slot.
func (w weigher) own(tf, slot uint32) float32 {
	return w.doc.Weight(tf, w.norm(w.seg.childTokens[slot]))
}

// context is the context weight times the BM25 weight of a term
// occurring tf times in parent's context.
func (w weigher) context(tf, parent uint32) float32 {
	return w.contextAt(tf, w.contextNorm(parent))
}

// contextNorm is the length normalisation of parent's context.
func (w weigher) contextNorm(parent uint32) float64 {
	return w.norm(w.seg.parentTokens[parent])
}

// contextAt is context for a context of length normalisation norm.
func (w weigher) contextAt(tf uint32, norm float64) float32 {
	return w.factor * w.doc.Weight(tf, norm)
}

// postingBound bounds the weight of the term for every child of the
// parent of pl's j-th posting: the largest own weight among its children
// holding the term (their postings in cl, the term's child postings),
// plus its context's weight. A child's weight is its own plus its
// context's, rounded, so no child's exceeds the sum of the largest own
// and the context's, rounded alike.
func (w weigher) postingBound(pl parentList, j int, cl childList) float32 {
	var own, ctx float32
	lo, hi := pl.childSpan(j, cl.len())
	for i := lo; i < hi; i++ {
		own = max(own, w.own(cl.tf(i), cl.slot(i)))
	}
	if tf := pl.context(j); tf > 0 {
		ctx = w.context(tf, pl.parent(j))
	}
	return own + ctx
}
