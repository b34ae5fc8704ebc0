package bm25

// DocWeights computes the BM25 document weights of one fitted set of
// statistics from term frequencies and text lengths alone: what a child
// index that stores counts instead of weights needs to weigh its
// postings when it is searched. Its arithmetic is the embedder's own, so
// Weight(tf, Norm(tokens)) is bit for bit the value EmbedDocuments gives
// a term occurring tf times in a text of that many tokens.
type DocWeights struct {
	k1, b, avgLen float64
}

// DocWeights returns the document weights of the current statistics, or
// ErrNotFitted before Fit or FitCorpus.
func (l *Lexical) DocWeights() (DocWeights, error) {
	st, err := l.fitted()
	if err != nil {
		return DocWeights{}, err
	}
	return l.docWeights(st), nil
}

// docWeights returns the document weights of st.
func (l *Lexical) docWeights(st *lexicalStats) DocWeights {
	return DocWeights{k1: l.k1, b: l.b, avgLen: st.avgLen}
}

// Norm is the BM25 length normalisation k1·(1 − b + b·|d|/avgdl) of a
// text of tokens tokens (k1 when avgdl is 0).
func (w DocWeights) Norm(tokens int) float64 {
	if w.avgLen > 0 {
		return w.k1 * (1 - w.b + w.b*float64(tokens)/w.avgLen)
	}
	return w.k1
}

// Weight is the saturated weight of a term occurring tf times in a text
// of length normalisation norm. It grows with tf and falls as norm grows,
// so the weight at the largest tf and the smallest norm of a set of
// postings bounds every weight among them.
func (w DocWeights) Weight(tf uint32, norm float64) float32 {
	f := float64(tf)
	return float32(f * (w.k1 + 1) / (f + norm))
}
