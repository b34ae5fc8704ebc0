package segment

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// Hit is one child found by Search: its id, where it is, and its score.
type Hit struct {
	ID      string
	Segment int
	Slot    uint32
	Score   float32
}

// SearchExhaustive returns the k children of highest score for the sparse
// query q (a vector of the set's Lexical: vocabulary ids, strictly
// increasing), best first, ties going to the smaller id, children of no
// positive score left out. It scores every posting of the query's terms,
// and each child's score is the one the inner product of q with the
// child's indexed vector gives, bit for bit (see the package comment).
// Search returns the same hits, pruning.
func (s *Set) SearchExhaustive(ctx context.Context, q *vector.Sparse, k int) ([]Hit, error) {
	return s.SearchExhaustiveFiltered(ctx, q, k, nil)
}

// SearchExhaustiveFiltered is SearchExhaustive among the children keep
// accepts (all of them when keep is nil); see SearchFiltered.
func (s *Set) SearchExhaustiveFiltered(ctx context.Context, q *vector.Sparse, k int, keep func(Hit) bool) ([]Hit, error) {
	if err := s.checkRequest(q, k); err != nil {
		return nil, err
	}
	best := topK{k: k, keep: keep}
	var acc []float32
	for i, seg := range s.segs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("segment search: %w", err)
		}
		acc = slices.Grow(acc[:0], seg.Children())[:seg.Children()]
		clear(acc)
		s.score(i, q, acc)
		for slot, score := range acc {
			if score > 0 {
				best.offer(candidate{score: score, seg: i, slot: uint32(slot), id: seg.idBytes(uint32(slot))})
			}
		}
	}
	return best.hits(), nil
}

// checkRequest refuses a top k that is not positive and a query whose
// ids are not strictly increasing or beyond the vocabulary, or whose
// weights are not finite.
func (s *Set) checkRequest(q *vector.Sparse, k int) error {
	if k <= 0 {
		return fmt.Errorf("segment search: top k must be positive, got %d", k)
	}
	if len(q.Indices) != len(q.Values) {
		return fmt.Errorf("segment search: %d query indices for %d values", len(q.Indices), len(q.Values))
	}
	for i, id := range q.Indices {
		if int(id) >= len(s.vocab) || (i > 0 && id <= q.Indices[i-1]) {
			return fmt.Errorf("segment search: query term id %d is out of order or beyond the vocabulary of %d terms", id, len(s.vocab))
		}
		if v := float64(q.Values[i]); math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("segment search: query term id %d has the weight %v", id, v)
		}
	}
	return nil
}

// score adds to acc, the scores of the i-th segment's children, the
// products of q's weights with their weights for each of q's terms, term
// by term in increasing id order, as an inner product does.
func (s *Set) score(i int, q *vector.Sparse, acc []float32) {
	for j, id := range q.Indices {
		if q.Values[j] == 0 {
			continue
		}
		for _, in := range s.terms.of(id) {
			if int(in.seg) == i {
				s.accumulate(s.segs[i], int(in.k), q.Values[j], acc)
			}
		}
	}
}

// accumulate adds qw times each child's weight for seg's k-th term to
// acc (see weigher.weight): parent posting by parent posting, each of
// the parent's children holding the term or, when its context holds the
// term, every child of the parent.
func (s *Set) accumulate(seg *Segment, k int, qw float32, acc []float32) {
	cl, pl := seg.children(k), seg.parents(k)
	w := s.weigher(seg)
	for j := range pl.len() {
		p := pl.parent(j)
		lo, hi := pl.childSpan(j, cl.len())
		if pl.context(j) == 0 {
			for i := lo; i < hi; i++ {
				acc[cl.slot(i)] = acc[cl.slot(i)] + qw*w.own(cl.tf(i), cl.slot(i))
			}
			continue
		}
		scaled := w.context(pl.context(j), p)
		next := lo
		for c := seg.parentFirst[p]; c < seg.parentFirst[p+1]; c++ {
			weight := scaled
			if next < hi && cl.slot(next) == c {
				weight = w.own(cl.tf(next), c) + scaled
				next++
			}
			acc[c] = acc[c] + qw*weight
		}
	}
}
