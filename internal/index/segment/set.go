package segment

import (
	"errors"
	"fmt"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// Set is a revision's child index: its segments, in order, and the BM25
// statistics of all their children, summed from the segments' counts.
type Set struct {
	segs          []*Segment
	lex           *bm25.Lexical
	weights       bm25.DocWeights
	norms         []float64         // see normTable
	bounds        [][]float32       // by segment, by parent posting: its postingBound
	dense         [][]*parentMaxima // by segment, by term: its bounds per parent, for terms in many parents
	seeds         int               // how many parents seedBest scores first
	vocab         []string          // by vocabulary id, so in byte order
	terms         termTable         // where each vocabulary term lies in the segments
	reach         [][]uint32        // by segment, by term: the children holding it (see reachOf)
	contextWeight float32
}

// NewSet returns the child index of segs, weighed with BM25 parameters k1
// and b and, when contextWeight is above zero, each child's context
// counted with that weight (every segment must then carry contexts, and
// none may without it). Its Lexical has exactly the statistics Fit gives
// over the texts of every child of segs.
func NewSet(segs []*Segment, k1, b float64, contextWeight float32) (*Set, error) {
	if contextWeight < 0 || contextWeight != contextWeight {
		return nil, fmt.Errorf("segment set: context weight %v is not a weight", contextWeight)
	}
	for i, s := range segs {
		if s.Contexts() != (contextWeight > 0) {
			return nil, fmt.Errorf("segment set: segment %d %s contexts, but the context weight is %v", i, hasOrLacks(s.Contexts()), contextWeight)
		}
	}
	lex, err := bm25.NewLexical(k1, b)
	if err != nil {
		return nil, fmt.Errorf("segment set: %w", err)
	}
	vocab, err := fitSegments(lex, segs)
	if err != nil {
		return nil, fmt.Errorf("segment set: %w", err)
	}
	weights, err := lex.DocWeights()
	if err != nil {
		return nil, fmt.Errorf("segment set: %w", err)
	}
	s := &Set{segs: segs, lex: lex, weights: weights, norms: normTable(weights, segs), vocab: vocab, contextWeight: contextWeight, seeds: seedParents}
	s.terms = newTermTable(segs, vocab)
	s.bounds = make([][]float32, len(segs))
	s.dense, s.reach = make([][]*parentMaxima, len(segs)), make([][]uint32, len(segs))
	for i, seg := range segs {
		bounds, largest := s.postingBounds(seg)
		s.bounds[i], s.dense[i] = bounds, denseMaxima(seg, bounds, largest)
		s.reach[i] = reachOf(seg)
	}
	return s, nil
}

// postingBounds returns the bound of every parent posting of seg, in
// order, with the groups of children holding its term in its lowest bits
// (see withGroups), and each term's largest such bound: the bounds depend
// on the statistics, so a set computes them once, reading each parent
// and child posting once.
func (s *Set) postingBounds(seg *Segment) (bounds, largest []float32) {
	w := s.weigher(seg)
	bounds = make([]float32, 0, seg.h.parentPostings)
	largest = make([]float32, seg.Terms())
	for k := range seg.Terms() {
		cl, pl := seg.children(k), seg.parents(k)
		for j := range pl.len() {
			bound := withGroups(w.postingBound(pl, j, cl), seg.heldBy(pl, j, cl))
			bounds = append(bounds, bound)
			largest[k] = max(largest[k], bound)
		}
	}
	return bounds, largest
}

// reachOf returns, for each of seg's terms, how many children hold it in
// their text or their parent's context: the children whose indexed vector
// holds the term.
func reachOf(seg *Segment) []uint32 {
	reach := make([]uint32, seg.Terms())
	for k := range seg.Terms() {
		cl, pl := seg.children(k), seg.parents(k)
		for j := range pl.len() {
			lo, hi := pl.childSpan(j, cl.len())
			n := uint32(hi - lo)
			if p := pl.parent(j); pl.context(j) > 0 {
				n = seg.parentFirst[p+1] - seg.parentFirst[p]
			}
			reach[k] += n
		}
	}
	return reach
}

// postings returns how many children hold each of q's terms, summed.
func (s *Set) postings(q *vector.Sparse) int {
	n := 0
	for _, id := range q.Indices {
		if int(id) >= len(s.vocab) {
			continue
		}
		for _, in := range s.terms.of(id) {
			n += int(s.reach[in.seg][in.k])
		}
	}
	return n
}

// Children returns the number of children of every segment.
func (s *Set) Children() int {
	n := 0
	for _, seg := range s.segs {
		n += seg.Children()
	}
	return n
}

// hasOrLacks words whether a segment carries contexts.
func hasOrLacks(contexts bool) string {
	if contexts {
		return "has"
	}
	return "lacks"
}

// fitSegments fits lex on the summed counts of segs and returns its
// vocabulary by id. It reads each segment's terms and document
// frequencies, never a posting.
func fitSegments(lex *bm25.Lexical, segs []*Segment) ([]string, error) {
	stats := bm25.NewCorpusStats()
	var terms []string
	var dfs []uint32
	for i, s := range segs {
		terms, dfs = terms[:0], dfs[:0]
		for k := range s.Terms() {
			if df := s.DocFreq(k); df > 0 {
				terms, dfs = append(terms, s.Term(k)), append(dfs, df)
			}
		}
		if err := stats.AddCounts(s.Children(), s.Tokens(), terms, dfs); err != nil {
			return nil, fmt.Errorf("segment %d: %w", i, err)
		}
	}
	met := stats.Terms() // every term counted: FitCorpus keeps them all
	if err := lex.FitCorpus(stats); err != nil {
		return nil, err
	}
	vocab := make([]string, lex.VocabularySize())
	for _, t := range met {
		id, _, ok := lex.DocFreq(t)
		if !ok {
			return nil, errors.New("a counted term is not in the vocabulary")
		}
		vocab[id] = t
	}
	return vocab, nil
}

// Lexical returns the embedder fitted on the set's statistics, which
// embeds queries for Search.
func (s *Set) Lexical() *bm25.Lexical { return s.lex }

// Segments returns the set's segments, in order.
func (s *Set) Segments() []*Segment { return s.segs }

// HeapBytes estimates what the set holds on the heap beside its
// segments' bytes: every parent posting's bound, with the groups of
// children holding its term, and how many children hold each term (4
// bytes each), the dense terms' maxima (a byte per parent) and which parents they hold (16 bytes per 64), the norm table,
// the vocabulary and where each of its terms lies in the segments.
func (s *Set) HeapBytes() int64 {
	n := int64(8*len(s.norms)) + s.terms.bytes()
	for i := range s.bounds {
		n += int64(4*len(s.bounds[i]) + 8*len(s.dense[i]) + 4*len(s.reach[i]))
		for _, d := range s.dense[i] {
			if d != nil {
				n += int64(len(d.codes) + 16*len(d.held))
			}
		}
	}
	for _, t := range s.vocab {
		n += int64(16 + len(t))
	}
	return n
}
