package segment

import "github.com/parentrag/parentrag/internal/retrieval/embed"

// weigher weighs the postings of one segment with a set's statistics. A
// child's weight for a term is its own BM25 weight for it plus the
// context weight times its parent's context BM25 weight for it, each part
// present only where that text holds the term, in the float32 arithmetic
// of vector.AppendScaled: own, the context weight times the context's
// (rounded), or their sum (rounded).
type weigher struct {
	doc    embed.DocWeights
	factor float32 // the context weight
	seg    *Segment
}

// weigher returns the weigher of seg's postings.
func (s *Set) weigher(seg *Segment) weigher {
	return weigher{doc: s.weights, factor: s.contextWeight, seg: seg}
}

// own is the BM25 weight of a term occurring tf times in the child in
// slot.
func (w weigher) own(tf, slot uint32) float32 {
	return w.doc.Weight(tf, w.doc.Norm(int(w.seg.childTokens[slot])))
}

// context is the context weight times the BM25 weight of a term
// occurring tf times in parent's context.
func (w weigher) context(tf, parent uint32) float32 {
	return w.factor * w.doc.Weight(tf, w.doc.Norm(int(w.seg.parentTokens[parent])))
}
