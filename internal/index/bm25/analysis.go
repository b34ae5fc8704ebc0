package bm25

import (
	"fmt"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// Analysis is all the lexical embedder needs to know of one text: its
// distinct analyzed terms in order of first occurrence, how often each
// occurs, and its number of tokens (repeats included, see Analyze).
// Fitting on analyses and embedding them gives exactly what Fit and
// EmbedDocuments give for the texts they were made from, without analysing
// any text again.
type Analysis struct {
	Terms []string
	// IDs, set in place of Terms, are the terms as ids of the vocabulary
	// of the embedder that embeds the analysis (see
	// CorpusStats.VocabularyID), with the terms that vocabulary lacks
	// left out; Counts follow them.
	IDs    []uint32
	Counts []uint32
	Tokens int
}

// AnalysisScratch holds the buffers AnalyzeCounts reuses across the texts
// one goroutine analyses; the zero value is ready.
type AnalysisScratch struct {
	toks     []string
	hashes   []uint64 // the termHash of each term of the text being analysed
	distinct distinctTerms
	ids      []uint64
	spareIDs []uint64 // sortPackedIDs' other array
	tokens   Tokens   // TokenizeScratch's
	own      AnalysisArena
	arena    *AnalysisArena // where analyses take their arrays; nil for own
}

// UseArena makes the analyses s returns from now on take their arrays
// from arena, or, for nil, from an arena of s's own, which never hands
// its memory out twice.
func (s *AnalysisScratch) UseArena(arena *AnalysisArena) { s.arena = arena }

// arenaInUse returns the arena analyses take their arrays from.
func (s *AnalysisScratch) arenaInUse() *AnalysisArena {
	if s.arena != nil {
		return s.arena
	}
	return &s.own
}

// AnalyzeCounts analyses text once and returns its terms, counts and length.
func (s *AnalysisScratch) AnalyzeCounts(text string) Analysis {
	s.hashes = s.hashes[:0]
	s.toks = appendAnalyzed(s.toks[:0], text, &s.hashes, nil)
	return s.countTokens(Tokens{terms: s.toks, hashes: s.hashes})
}

// countTokens returns the analysis of the terms of parts, one after the
// other, counted straight into the arrays the analysis keeps.
func (s *AnalysisScratch) countTokens(parts ...Tokens) Analysis {
	n := 0
	for _, p := range parts {
		n += len(p.terms)
	}
	s.distinct.reset(n)
	arena := s.arenaInUse()
	terms, counts := arena.room(n)
	for _, p := range parts {
		for k, t := range p.terms {
			hash := p.hashes[k]
			if i, ok := s.distinct.index(t, hash, terms); ok {
				counts[i]++
				continue
			}
			terms, counts = append(terms, t), append(counts, 1)
		}
	}
	arena.took(len(terms))
	if arena == &s.own {
		s.own.letGo()
	}
	k := len(terms)
	return Analysis{Tokens: n, Terms: terms[:k:k], Counts: counts[:k:k]}
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
	ids, err := l.vocabularyIDs(st, a, s)
	if err != nil {
		return nil, err
	}
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
	ids, err := l.vocabularyIDs(st, a, s)
	if err != nil {
		return dst, err
	}
	return l.appendWeights(dst, st, a, ids), nil
}

// vocabularyIDs returns the vocabulary terms of a as id<<32|count, in
// increasing id order, in s's buffers, which it reuses. An analysis given
// as ids must hold ids of st's vocabulary.
func (l *Lexical) vocabularyIDs(st *lexicalStats, a *Analysis, s *AnalysisScratch) ([]uint64, error) {
	ids := s.ids[:0]
	if a.Terms == nil {
		var err error
		if ids, err = appendGivenIDs(ids, st, a); err != nil {
			return nil, err
		}
	} else {
		ids = appendTermIDs(ids, st, a)
	}
	s.ids = sortPackedIDs(ids, len(st.df), &s.spareIDs)
	return s.ids, nil
}

// appendGivenIDs appends the ids of an analysis given as ids, each as
// id<<32|count, refusing one beyond st's vocabulary.
func appendGivenIDs(dst []uint64, st *lexicalStats, a *Analysis) ([]uint64, error) {
	for i, id := range a.IDs {
		if int(id) >= len(st.df) {
			return nil, fmt.Errorf("term id %d is beyond the vocabulary of %d terms", id, len(st.df))
		}
		dst = append(dst, uint64(id)<<32|uint64(a.Counts[i]))
	}
	return dst, nil
}

// appendTermIDs appends the vocabulary id of each term of a the
// vocabulary holds, each as id<<32|count.
func appendTermIDs(dst []uint64, st *lexicalStats, a *Analysis) []uint64 {
	for i, t := range a.Terms {
		if id, ok := st.vocab[t]; ok {
			dst = append(dst, uint64(id)<<32|uint64(a.Counts[i]))
		}
	}
	return dst
}

// appendWeights appends the weight of each packed id of a text analysed
// as a to dst.
func (l *Lexical) appendWeights(dst vector.Sparse, st *lexicalStats, a *Analysis, ids []uint64) vector.Sparse {
	w := l.docWeights(st)
	norm := w.Norm(a.Tokens)
	for _, packed := range ids {
		dst.Indices = append(dst.Indices, uint32(packed>>32))
		dst.Values = append(dst.Values, w.Weight(uint32(packed), norm))
	}
	return dst
}
