package bm25

import (
	"fmt"
	"math"
	"strings"
)

// CorpusStats accumulates the corpus statistics of a lexical embedder (N,
// the document frequency of every term, the total token count) from the
// analyses of every child text, in any order. It gives each term it meets
// an id of its own, in order of first meeting, so that a build can keep
// its analyses as ids between its passes; once the embedder is fitted,
// VocabularyID turns those ids into the embedder's.
type CorpusStats struct {
	ids    map[string]uint32 // the id of every term met
	terms  []string          // by id
	df     []uint32          // by id; 0 for a term only interned
	docs   int
	tokens uint64
	vocab  []uint32 // by id, after FitCorpus: the vocabulary id, or noTerm
}

// noTerm marks, in CorpusStats.vocab, a term the vocabulary lacks.
const noTerm = math.MaxUint32

// NewCorpusStats returns statistics of no text.
func NewCorpusStats() *CorpusStats {
	return &CorpusStats{ids: map[string]uint32{}}
}

// NewCorpusStatsOf returns statistics of no text that give terms the ids
// 0 to len(terms)-1, in order, as the statistics that met them did: so a
// build can count and read units whose analyses an earlier build kept as
// those ids (see AddIDs). It fails when a term repeats.
func NewCorpusStatsOf(terms []string) (*CorpusStats, error) {
	c := &CorpusStats{ids: make(map[string]uint32, len(terms)), terms: make([]string, 0, len(terms)), df: make([]uint32, len(terms))}
	for _, t := range terms {
		if _, ok := c.ids[t]; ok {
			return nil, fmt.Errorf("term %q repeats in the term table", t)
		}
		c.ids[t] = uint32(len(c.terms))
		c.terms = append(c.terms, t)
	}
	return c, nil
}

// Terms returns every term met so far, by id; nil after FitCorpus. The
// slice is the statistics' own: the caller must not change it.
func (c *CorpusStats) Terms() []string { return c.terms }

// AddIDs counts one text of tokens tokens given as the distinct ids of its
// terms, as Add counts the text it was analysed from. It fails, counting
// nothing, when an id is one c never gave.
func (c *CorpusStats) AddIDs(tokens int, ids []uint32) error {
	for _, id := range ids {
		if int(id) >= len(c.df) {
			return fmt.Errorf("term id %d is beyond the %d terms met", id, len(c.df))
		}
	}
	c.docs++
	c.tokens += uint64(tokens)
	for _, id := range ids {
		c.df[id]++
	}
	return nil
}

// Add counts one text and appends to ids the id of each of its terms, in
// order. A term met for the first time is copied, so the statistics never
// keep the memory of the analysis it came from (a decoded unit's terms
// are slices of its encoding).
func (c *CorpusStats) Add(a Analysis, ids []uint32) []uint32 {
	c.docs++
	c.tokens += uint64(a.Tokens)
	for _, t := range a.Terms {
		id := c.id(t)
		c.df[id]++
		ids = append(ids, id)
	}
	return ids
}

// Count counts one text, as Add does, keeping no ids.
func (c *CorpusStats) Count(a Analysis) {
	c.docs++
	c.tokens += uint64(a.Tokens)
	for _, t := range a.Terms {
		c.df[c.id(t)]++
	}
}

// AddCounts counts docs texts of tokens tokens in all, of which dfs[i]
// hold terms[i]: what Count gives for those texts, from a summary of
// them (a child index segment's) instead of their analyses. It fails,
// counting nothing, when terms and dfs differ in length or a term holds
// more texts than docs.
func (c *CorpusStats) AddCounts(docs int, tokens uint64, terms []string, dfs []uint32) error {
	if len(terms) != len(dfs) {
		return fmt.Errorf("%d terms but %d document frequencies", len(terms), len(dfs))
	}
	for i, df := range dfs {
		if int64(df) > int64(docs) {
			return fmt.Errorf("term %q is in %d of %d texts", terms[i], df, docs)
		}
	}
	c.docs += docs
	c.tokens += tokens
	for i, t := range terms {
		if dfs[i] > 0 {
			c.df[c.id(t)] += dfs[i]
		}
	}
	return nil
}

// Intern appends to ids the id of each term of a, in order, without
// counting a: a text embedded with the corpus's statistics but not part
// of the corpus (a child's context). A term met only here stays out of
// the vocabulary.
func (c *CorpusStats) Intern(a Analysis, ids []uint32) []uint32 {
	for _, t := range a.Terms {
		ids = append(ids, c.id(t))
	}
	return ids
}

// id returns the id of term t, giving it the next one when t is new.
func (c *CorpusStats) id(t string) uint32 {
	if id, ok := c.ids[t]; ok {
		return id
	}
	id := uint32(len(c.terms))
	t = strings.Clone(t)
	c.ids[t] = id
	c.terms = append(c.terms, t)
	c.df = append(c.df, 0)
	return id
}

// Counted returns how many of the terms met some counted text holds:
// the vocabulary FitCorpus would make.
func (c *CorpusStats) Counted() int {
	n := 0
	for _, df := range c.df {
		if df > 0 {
			n++
		}
	}
	return n
}

// Docs returns how many texts were added.
func (c *CorpusStats) Docs() int { return c.docs }

// VocabularyID returns the id, in the vocabulary of the embedder c
// fitted, of the term c gave id, and false for a term that vocabulary
// lacks or an id c never gave. Before FitCorpus it returns false.
func (c *CorpusStats) VocabularyID(id uint32) (uint32, bool) {
	if int(id) >= len(c.vocab) || c.vocab[id] == noTerm {
		return 0, false
	}
	return c.vocab[id], true
}

// FitCorpus gives l the statistics c counted, exactly those Fit computes
// from the same texts, and replaces any previous ones. Afterwards c only
// answers VocabularyID.
func (l *Lexical) FitCorpus(c *CorpusStats) error {
	if uint64(c.docs) > math.MaxUint32 {
		return fmt.Errorf("fit: %d texts exceed the 2^32-1 document limit", c.docs)
	}
	counts := make(map[string]uint32, len(c.terms))
	for id, t := range c.terms {
		if c.df[id] > 0 {
			counts[t] = c.df[id]
		}
	}
	st := newLexicalStats(counts, c.docs, c.tokens)
	c.vocab = make([]uint32, len(c.terms))
	for id, t := range c.terms {
		c.vocab[id] = noTerm
		if c.df[id] > 0 {
			c.vocab[id] = st.vocab[t]
		}
	}
	c.ids, c.terms, c.df = nil, nil, nil
	l.stats.Store(st)
	return nil
}
