package bm25

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// Default BM25 parameters: k1 saturates term frequency, b scales length
// normalisation. These suit short children better than Lucene's 1.2/0.75.
const (
	DefaultK1 = 0.9
	DefaultB  = 0.4
)

// ErrNotFitted is returned (wrapped) by a Lexical embedder used before Fit or
// LoadLexical gave it corpus statistics.
var ErrNotFitted = errors.New("lexical embedder is not fitted")

// Lexical is the offline BM25 embedder. Documents become sparse vectors of
// saturated, length-normalised term frequencies and queries sparse vectors of
// IDF weights, both indexed by vocabulary term id, so that the inner product
// of a query and a document vector is exactly (to float32 rounding) the
// document's BM25 score for the query:
//
//	score(q, d) = Σ_{t ∈ q} IDF(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//	IDF(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//
// where the sum runs over the analyzed query tokens, repeats included, |d| is
// the number of analyzed tokens of d (see Analyze) and N, df and avgdl come
// from Fit. Fit must be given every text of the index: a term absent from the
// fitted vocabulary is dropped from document and query vectors alike (it still
// counts towards the document length), because it has no id.
//
// A Lexical is safe for concurrent use; a Fit replaces the statistics
// atomically, and each embedding call uses one consistent set of them.
type Lexical struct {
	k1, b float64
	stats atomic.Pointer[lexicalStats]
}

// lexicalStats are immutable corpus statistics. Term ids are the ranks of
// the terms in byte-wise sorted order, so they are deterministic.
type lexicalStats struct {
	docs     int
	totalLen uint64
	avgLen   float64
	vocab    map[string]uint32
	df       []uint32
}

// NewLexical returns an unfitted BM25 embedder with parameters k1 (finite,
// >= 0) and b (in [0, 1]), or an error when they are out of range.
func NewLexical(k1, b float64) (*Lexical, error) {
	if err := validateParams(k1, b); err != nil {
		return nil, err
	}
	return &Lexical{k1: k1, b: b}, nil
}

// validateParams checks the BM25 parameter ranges.
func validateParams(k1, b float64) error {
	if math.IsNaN(k1) || math.IsInf(k1, 0) || k1 < 0 {
		return fmt.Errorf("bm25 k1 must be finite and >= 0, got %v", k1)
	}
	if math.IsNaN(b) || b < 0 || b > 1 {
		return fmt.Errorf("bm25 b must be within [0, 1], got %v", b)
	}
	return nil
}

// Params returns the BM25 parameters k1 and b.
func (l *Lexical) Params() (k1, b float64) {
	return l.k1, l.b
}

// Fitted reports whether the embedder has corpus statistics.
func (l *Lexical) Fitted() bool {
	return l.stats.Load() != nil
}

// DocCount returns N, the number of texts given to Fit (0 when unfitted).
func (l *Lexical) DocCount() int {
	if st := l.stats.Load(); st != nil {
		return st.docs
	}
	return 0
}

// VocabularySize returns the number of distinct terms seen by Fit; term ids
// are in [0, VocabularySize()). It is 0 when unfitted.
func (l *Lexical) VocabularySize() int {
	if st := l.stats.Load(); st != nil {
		return len(st.df)
	}
	return 0
}

// AvgDocLength returns avgdl, the mean number of analyzed tokens per fitted
// text (0 when unfitted or fitted on no text).
func (l *Lexical) AvgDocLength() float64 {
	if st := l.stats.Load(); st != nil {
		return st.avgLen
	}
	return 0
}

// DocFreq returns the id of the analyzed term and the number of fitted texts
// containing it, or ok false when the term is not in the vocabulary.
func (l *Lexical) DocFreq(term string) (id uint32, df int, ok bool) {
	st := l.stats.Load()
	if st == nil {
		return 0, 0, false
	}
	id, ok = st.vocab[term]
	if !ok {
		return 0, 0, false
	}
	return id, int(st.df[id]), true
}

// Fit computes the corpus statistics from texts, which must be every child
// text of the index, and replaces any previous statistics. Term ids are
// assigned in sorted term order, so equal corpora give equal ids. Texts are
// analyzed in parallel on up to GOMAXPROCS goroutines.
func (l *Lexical) Fit(texts []string) error {
	if uint64(len(texts)) > math.MaxUint32 {
		return fmt.Errorf("fit: %d texts exceed the 2^32-1 document limit", len(texts))
	}
	counts, total := countDocFreqs(texts)
	l.stats.Store(newLexicalStats(counts, len(texts), total))
	return nil
}

// newLexicalStats turns term -> document frequency counts into statistics,
// reusing the counts map as the term -> id vocabulary.
func newLexicalStats(counts map[string]uint32, docs int, total uint64) *lexicalStats {
	terms := make([]string, 0, len(counts))
	for t := range counts {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	df := make([]uint32, len(terms))
	for id, t := range terms {
		df[id] = counts[t]
		counts[t] = uint32(id)
	}
	st := &lexicalStats{docs: docs, totalLen: total, vocab: counts, df: df}
	if docs > 0 {
		st.avgLen = float64(total) / float64(docs)
	}
	return st
}

// fitChunk is how many texts a Fit worker analyzes per unit of work.
const fitChunk = 256

// fitResult is one analyzed chunk: the distinct terms of each text,
// concatenated, and the chunk's total token count.
type fitResult struct {
	terms  []string
	tokens uint64
}

// countDocFreqs analyzes texts in parallel and returns the document
// frequency of every term and the total number of tokens.
func countDocFreqs(texts []string) (map[string]uint32, uint64) {
	workers := workerCount(len(texts), fitChunk)
	results := make(chan fitResult, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { analyzeChunks(texts, &next, results) })
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	counts := make(map[string]uint32)
	var total uint64
	for r := range results {
		total += r.tokens
		for _, t := range r.terms {
			counts[t]++
		}
	}
	return counts, total
}

// analyzeChunks claims chunks of texts until none is left, sending the
// distinct terms of each text to results.
func analyzeChunks(texts []string, next *atomic.Int64, results chan<- fitResult) {
	var toks []string
	seen := make(map[string]struct{})
	for {
		lo := int(next.Add(fitChunk)) - fitChunk
		if lo >= len(texts) {
			return
		}
		hi := min(lo+fitChunk, len(texts))
		var r fitResult
		for _, text := range texts[lo:hi] {
			toks = AppendAnalyzed(toks[:0], text)
			r.tokens += uint64(len(toks))
			r.terms = appendDistinct(r.terms, toks, seen)
		}
		results <- r
	}
}

// appendDistinct appends the distinct strings of toks to dst, using seen
// (emptied first) as scratch space.
func appendDistinct(dst, toks []string, seen map[string]struct{}) []string {
	clear(seen)
	for _, t := range toks {
		if _, ok := seen[t]; !ok {
			seen[t] = struct{}{}
			dst = append(dst, t)
		}
	}
	return dst
}

// workerCount returns how many goroutines should process n items in chunks
// of the given size: at most GOMAXPROCS and at least 1.
func workerCount(n, chunk int) int {
	return max(1, min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk))
}

// fitted returns the current statistics or a wrapped ErrNotFitted.
func (l *Lexical) fitted() (*lexicalStats, error) {
	st := l.stats.Load()
	if st == nil {
		return nil, fmt.Errorf("bm25: %w", ErrNotFitted)
	}
	return st, nil
}

// embedChunk is how many texts an EmbedDocuments worker embeds per unit of
// work; smaller batches are embedded on the calling goroutine.
const embedChunk = 128

// EmbedDocuments returns one sparse BM25 document vector per text, in order.
// Each vector has strictly increasing term ids and positive weights; a text
// with no vocabulary term gets a non-nil Sparse with no entries. Large batches
// are embedded in parallel. It fails with ErrNotFitted before Fit, and with
// the context's error when ctx ends first.
func (l *Lexical) EmbedDocuments(ctx context.Context, texts []string) ([]vector.Vector, error) {
	st, err := l.fitted()
	if err != nil {
		return nil, err
	}
	out := make([]vector.Vector, len(texts))
	err = parallelChunks(ctx, len(texts), embedChunk, func(lo, hi int) {
		var s docScratch
		for i := lo; i < hi; i++ {
			out[i] = vector.Vector{Sparse: l.embedDoc(st, texts[i], &s)}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("bm25 embed documents: %w", err)
	}
	return out, nil
}

// EmbedQuery returns the sparse BM25 query vector of text: one entry per
// distinct analyzed query term in the vocabulary, weighted by its IDF times
// its number of occurrences in the query. Terms outside the vocabulary are
// dropped; a query with none gets a non-nil Sparse with no entries.
func (l *Lexical) EmbedQuery(ctx context.Context, text string) (vector.Vector, error) {
	if err := ctx.Err(); err != nil {
		return vector.Vector{}, fmt.Errorf("bm25 embed query: %w", err)
	}
	st, err := l.fitted()
	if err != nil {
		return vector.Vector{}, err
	}
	s, _ := queryScratch.Get().(*docScratch)
	if s == nil {
		s = &docScratch{}
	}
	defer queryScratch.Put(s)
	ids, _ := s.termIDs(st, text)
	sp := newSparse(ids, func(id uint32, count int) float32 {
		return float32(st.idf(id) * float64(count))
	})
	return vector.Vector{Sparse: sp}, nil
}

// idf is Lucene's always-positive BM25 inverse document frequency.
func (st *lexicalStats) idf(id uint32) float64 {
	n, df := float64(st.docs), float64(st.df[id])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// queryScratch reuses the buffers of EmbedQuery across queries, so that a
// long query does not allocate its tokens afresh each time.
var queryScratch sync.Pool

// docScratch holds buffers reused across the texts one goroutine embeds.
type docScratch struct {
	toks []string
	ids  []uint32
}

// termIDs analyzes text and returns the sorted vocabulary ids of its tokens,
// repeats included, and the total token count (known or not).
func (s *docScratch) termIDs(st *lexicalStats, text string) ([]uint32, int) {
	s.toks = AppendAnalyzed(s.toks[:0], text)
	s.ids = s.ids[:0]
	for _, t := range s.toks {
		if id, ok := st.vocab[t]; ok {
			s.ids = append(s.ids, id)
		}
	}
	slices.Sort(s.ids)
	return s.ids, len(s.toks)
}

// embedDoc returns the BM25 document vector of text.
func (l *Lexical) embedDoc(st *lexicalStats, text string, s *docScratch) *vector.Sparse {
	ids, dl := s.termIDs(st, text)
	w := l.docWeights(st)
	norm := w.Norm(dl)
	return newSparse(ids, func(_ uint32, tf int) float32 {
		return w.Weight(uint32(tf), norm)
	})
}

// newSparse builds a sparse vector from sorted ids, with one entry per
// distinct id weighted by weight(id, number of repeats).
func newSparse(ids []uint32, weight func(id uint32, count int) float32) *vector.Sparse {
	n := 0
	for i := range ids {
		if i == 0 || ids[i] != ids[i-1] {
			n++
		}
	}
	sp := &vector.Sparse{Indices: make([]uint32, 0, n), Values: make([]float32, 0, n)}
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		sp.Indices = append(sp.Indices, ids[i])
		sp.Values = append(sp.Values, weight(ids[i], j-i))
		i = j
	}
	return sp
}

// parallelChunks calls fn on consecutive [lo, hi) chunks covering [0, n),
// in parallel when there is more than one chunk, checking ctx between chunks.
// It returns ctx's error if ctx ended before every chunk was processed.
func parallelChunks(ctx context.Context, n, chunk int, fn func(lo, hi int)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var next atomic.Int64
	work := func() {
		for ctx.Err() == nil {
			lo := int(next.Add(int64(chunk))) - chunk
			if lo >= n {
				return
			}
			fn(lo, min(lo+chunk, n))
		}
	}
	workers := workerCount(n, chunk)
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if next.Load() < int64(n) {
		return ctx.Err()
	}
	return nil
}
