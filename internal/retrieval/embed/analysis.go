package embed

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/vector"
)

// Analysis is all the lexical embedder needs to know of one text: its
// distinct analyzed terms in order of first occurrence, how often each
// occurs, and its number of tokens (repeats included, see Analyze).
// Fitting on analyses and embedding them gives exactly what Fit and
// EmbedDocuments give for the texts they were made from, without analysing
// any text again.
type Analysis struct {
	Terms  []string
	Counts []uint32
	Tokens int
}

// AnalysisScratch holds the buffers AnalyzeCounts reuses across the texts
// one goroutine analyses (once used, about 2 MiB, most of it a table of
// frequent words and their terms); the zero value is ready.
type AnalysisScratch struct {
	toks     []string
	stems    localStems
	distinct distinctTerms
	counts   []uint32
	ids      []uint64
}

// AnalyzeCounts analyses text once and returns its terms, counts and length.
func (s *AnalysisScratch) AnalyzeCounts(text string) Analysis {
	s.stems.hashes = s.stems.hashes[:0]
	s.toks = appendAnalyzed(s.toks[:0], text, &s.stems)
	s.distinct.reset(len(s.toks))
	distinct := s.toks[:0] // overwrites tokens already counted
	counts := s.counts[:0]
	for k, t := range s.toks {
		if i, ok := s.distinct.index(t, s.stems.hashes[k], distinct); ok {
			counts[i]++
			continue
		}
		distinct = append(distinct, t)
		counts = append(counts, 1)
	}
	s.counts = counts
	a := Analysis{Terms: make([]string, len(distinct)), Counts: make([]uint32, len(distinct)), Tokens: len(s.toks)}
	copy(a.Terms, distinct)
	copy(a.Counts, counts)
	return a
}

// CorpusStats accumulates the corpus statistics of a lexical embedder (N,
// the document frequency of every term, the total token count) from the
// analyses of every child text, in any order.
type CorpusStats struct {
	df     map[string]uint32
	docs   int
	tokens uint64
}

// NewCorpusStats returns statistics of no text.
func NewCorpusStats() *CorpusStats {
	return &CorpusStats{df: map[string]uint32{}}
}

// Add counts one text. A term seen for the first time is copied, so the
// statistics never keep the memory of the analysis it came from (a
// decoded unit's terms are slices of its encoding).
func (c *CorpusStats) Add(a Analysis) {
	c.docs++
	c.tokens += uint64(a.Tokens)
	for _, t := range a.Terms {
		known := len(c.df)
		if c.df[t]++; len(c.df) > known {
			delete(c.df, t)
			c.df[strings.Clone(t)] = 1
		}
	}
}

// Docs returns how many texts were added.
func (c *CorpusStats) Docs() int { return c.docs }

// FitCorpus gives l the statistics c counted, exactly those Fit computes
// from the same texts, and replaces any previous ones. c must not be used
// after.
func (l *Lexical) FitCorpus(c *CorpusStats) error {
	if uint64(c.docs) > math.MaxUint32 {
		return fmt.Errorf("fit: %d texts exceed the 2^32-1 document limit", c.docs)
	}
	l.stats.Store(newLexicalStats(c.df, c.docs, c.tokens))
	c.df = nil
	return nil
}

// EmbedAnalysis returns the BM25 document vector of the analysed text, bit
// for bit what EmbedDocuments returns for the text itself. It fails with
// ErrNotFitted before Fit or FitCorpus. The scratch buffer s is reused
// across calls of one goroutine.
func (l *Lexical) EmbedAnalysis(a *Analysis, s *AnalysisScratch) (*vector.Sparse, error) {
	st, err := l.fitted()
	if err != nil {
		return nil, err
	}
	ids := l.vocabularyIDs(st, a, &s.ids)
	sp := l.appendWeights(vector.Sparse{Indices: make([]uint32, 0, len(ids)), Values: make([]float32, 0, len(ids))}, st, a, ids)
	return &sp, nil
}

// AppendAnalysis appends the entries of the vector EmbedAnalysis returns
// for a to dst's indices and values and returns the extended dst, so that
// many texts' vectors can share buffers. It fails as EmbedAnalysis does.
func (l *Lexical) AppendAnalysis(dst vector.Sparse, a *Analysis, s *AnalysisScratch) (vector.Sparse, error) {
	st, err := l.fitted()
	if err != nil {
		return dst, err
	}
	return l.appendWeights(dst, st, a, l.vocabularyIDs(st, a, &s.ids)), nil
}

// vocabularyIDs returns the vocabulary terms of a as id<<32|count, in
// increasing id order, in scratch, which it reuses.
func (l *Lexical) vocabularyIDs(st *lexicalStats, a *Analysis, scratch *[]uint64) []uint64 {
	ids := (*scratch)[:0]
	for i, t := range a.Terms {
		if id, ok := st.vocab[t]; ok {
			ids = append(ids, uint64(id)<<32|uint64(a.Counts[i]))
		}
	}
	slices.Sort(ids)
	*scratch = ids
	return ids
}

// appendWeights appends the weight of each packed id of a text analysed
// as a to dst.
func (l *Lexical) appendWeights(dst vector.Sparse, st *lexicalStats, a *Analysis, ids []uint64) vector.Sparse {
	norm := l.lengthNorm(st, a.Tokens)
	for _, packed := range ids {
		dst.Indices = append(dst.Indices, uint32(packed>>32))
		dst.Values = append(dst.Values, l.termWeight(uint32(packed), norm))
	}
	return dst
}

// LexicalPart returns the BM25 embedder inside e: e itself, or the sparse
// half of a hybrid; nil when e has none.
func LexicalPart(e Embedder) *Lexical {
	switch e := e.(type) {
	case *Lexical:
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
	case *Lexical:
		return nil
	case *Hybrid:
		return e.Dense
	}
	return e
}
