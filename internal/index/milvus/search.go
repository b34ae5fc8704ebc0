package milvus

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/milvus-io/milvus/client/v2/entity"
	milvusindex "github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// SearchOptions refine a search.
type SearchOptions struct {
	// Filter is a Milvus boolean expression over the scalar fields and the
	// metadata JSON, e.g. `metadata["lang"] == "en"`
	// or `doc_id in ["a", "b"]`. Empty matches every child.
	Filter string
	// GroupByParent makes Milvus group hits by parent_id (grouping search):
	// TopK then counts parents, each with at most GroupSize (default 1) of
	// its best children. Which of several children with exactly the same
	// score represents a parent is up to Milvus.
	GroupByParent bool
	GroupSize     int
}

// scoredHit is a hit with the score Milvus reported (a squared distance
// under L2).
type scoredHit struct {
	index.Hit
	raw float32
}

// leg is one vector field searched with one query vector.
type leg struct {
	field  string
	vec    entity.Vector
	metric index.Metric
	sparse bool
}

// Search returns at most req.TopK children by descending score, ties by
// ascending id, as index.Searcher requires. A sparse query scores
// by inner product and returns only children scoring above zero, exactly as
// the embedded store; a dense query scores by the configured metric (L2 as
// the negated Euclidean distance). A query with neither part, or an empty
// sparse part, returns no hits; one with both parts fails with
// index.ErrInvalidInput (use SearchHybrid), and so does a sparse
// query with a negative weight, which Milvus refuses. A search returns at
// most MaxTopK hits.
func (s *Store) Search(ctx context.Context, req index.SearchRequest) ([]index.Hit, error) {
	return s.SearchWith(ctx, req, SearchOptions{})
}

// SearchFiltered is Search restricted to the children keep accepts, by
// over-fetching (index.OverFetch): keep is a function of this process,
// which the database cannot run.
func (s *Store) SearchFiltered(ctx context.Context, req index.SearchRequest, keep func(index.Hit) bool) ([]index.Hit, error) {
	return index.OverFetch(ctx, s.Search, req, keep)
}

// SearchWith is Search with a filter and optional grouping by parent. A
// query with both a sparse and a dense part, on a collection with a dense
// field, is a hybrid search fused with RRF (grouping does not apply).
func (s *Store) SearchWith(ctx context.Context, req index.SearchRequest, opts SearchOptions) ([]index.Hit, error) {
	if req.TopK <= 0 {
		return nil, fmt.Errorf("search %s: topk must be positive, got %d: %w", s.cfg.Collection, req.TopK, index.ErrInvalidInput)
	}
	sp, dense := req.Vector.Sparse, req.Vector.Dense
	if sp != nil && len(sp.Indices) == 0 && len(sp.Values) == 0 {
		sp = nil
	}
	if sp != nil && len(dense) > 0 && s.cfg.Dense > 0 {
		// Both parts: search both fields and fuse the rankings with RRF.
		return s.SearchHybrid(ctx, HybridRequest{Sparse: sp, Dense: dense, TopK: req.TopK, Fusion: RRF, Filter: opts.Filter})
	}
	if sp != nil && len(dense) > 0 {
		return nil, fmt.Errorf("search %s: query sets both sparse and dense vectors but the collection has no dense field: %w", s.cfg.Collection, index.ErrInvalidInput)
	}
	var l *leg
	var err error
	switch {
	case sp != nil:
		l, err = s.sparseLeg(sp)
	case len(dense) > 0:
		l, err = s.denseLeg(dense)
	}
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", s.cfg.Collection, err)
	}
	if l == nil {
		return nil, nil
	}
	hits, err := s.searchLeg(ctx, l, req.TopK, opts)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", s.cfg.Collection, notFound(err))
	}
	out := make([]index.Hit, len(hits))
	for i, h := range hits {
		out[i] = h.Hit
	}
	return out, nil
}

func (s *Store) sparseLeg(sp *vector.Sparse) (*leg, error) {
	if err := checkSparse(sp, true); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	idx := append([]uint32(nil), sp.Indices...)
	val := append([]float32(nil), sp.Values...)
	e, err := entity.NewSliceSparseEmbedding(idx, val)
	if err != nil {
		return nil, fmt.Errorf("query: %w: %w", err, index.ErrInvalidInput)
	}
	return &leg{field: FieldSparse, vec: e, metric: index.IP, sparse: true}, nil
}

// denseLeg returns nil (no hits) for a collection without a dense field,
// and for a zero query under COSINE, as the embedded store does.
func (s *Store) denseLeg(q []float32) (*leg, error) {
	if err := checkFinite(q); err != nil {
		return nil, fmt.Errorf("query: dense vector: %w", err)
	}
	if s.cfg.Dense == 0 {
		return nil, nil
	}
	if len(q) != s.cfg.Dense {
		return nil, fmt.Errorf("dense query has %d dims, collection has %d: %w", len(q), s.cfg.Dense, index.ErrDimensionMismatch)
	}
	if s.cfg.metric == index.Cosine {
		zero := true
		for _, x := range q {
			zero = zero && x == 0
		}
		if zero {
			return nil, nil
		}
	}
	return &leg{field: FieldDense, vec: entity.FloatVector(slices.Clone(q)), metric: s.cfg.metric}, nil
}

// score turns a Milvus score into the index score: L2 distances come
// squared, smaller first, and become the negated distance.
func (l *leg) score(raw float32) float32 {
	if l.metric == index.L2 && !l.sparse {
		return -float32(math.Sqrt(float64(max(raw, 0))))
	}
	return raw
}

// keep reports whether a hit belongs in the results: sparse hits must score
// above zero (the embedded store's rule); NaN never does.
func (l *leg) keep(score float32) bool {
	if score != score {
		return false
	}
	return !l.sparse || score > 0
}

func cmpHits(a, b scoredHit) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}

// searchLeg returns the exact top topK of a leg, best first, ties by id.
// Milvus orders ties arbitrarily and cuts the list anywhere inside a run
// of equal scores, so it asks for more than topK and, while the last
// score it got ties the topK-th, asks again for twice as many.
func (s *Store) searchLeg(ctx context.Context, l *leg, topK int, opts SearchOptions) ([]scoredHit, error) {
	topK = min(topK, MaxTopK)
	limit := min(MaxTopK, topK+topK/2+8)
	for {
		raw, groups, err := s.annSearch(ctx, l, limit, opts)
		if err != nil {
			return nil, err
		}
		var hits []scoredHit
		var done bool
		if opts.GroupByParent {
			hits, done = l.cutGroups(raw, groups, topK, limit)
		} else {
			hits, done = l.cut(raw, topK, limit)
		}
		if done || limit == MaxTopK {
			return hits, nil
		}
		limit = min(MaxTopK, 2*limit)
	}
}

// cut sorts and cuts one answer of limit hits; done is false when a tie
// may continue past what Milvus returned.
func (l *leg) cut(raw []scoredHit, topK, limit int) ([]scoredHit, bool) {
	if len(raw) == 0 {
		return nil, true
	}
	worst := float32(math.Inf(1))
	hits := make([]scoredHit, 0, len(raw))
	for _, h := range raw {
		if h.Score == h.Score {
			worst = min(worst, h.Score)
		}
		if l.keep(h.Score) {
			hits = append(hits, h)
		}
	}
	slices.SortFunc(hits, cmpHits)
	complete := len(raw) < limit || (l.sparse && worst <= 0)
	if len(hits) >= topK {
		if hits[topK-1].Score > worst {
			complete = true
		}
		hits = hits[:topK]
	}
	return hits, complete
}

// cutGroups picks the topK best parents of a grouped answer, best child
// score first and ties by that child's id, and returns their hits sorted.
func (l *leg) cutGroups(raw []scoredHit, groups []string, topK, limit int) ([]scoredHit, bool) {
	type group struct {
		best scoredHit
		hits []scoredHit
	}
	byKey := make(map[string]*group)
	var order []*group
	for i, h := range raw {
		g := byKey[groups[i]]
		if g == nil {
			g = &group{best: h}
			byKey[groups[i]] = g
			order = append(order, g)
		}
		if cmpHits(h, g.best) < 0 {
			g.best = h
		}
		if l.keep(h.Score) {
			g.hits = append(g.hits, h)
		}
	}
	if len(order) == 0 {
		return nil, true
	}
	worst := float32(math.Inf(1))
	for _, g := range order {
		if g.best.Score == g.best.Score {
			worst = min(worst, g.best.Score)
		}
	}
	complete := len(order) < limit || (l.sparse && worst <= 0)
	order = slices.DeleteFunc(order, func(g *group) bool { return len(g.hits) == 0 })
	slices.SortFunc(order, func(a, b *group) int { return cmpHits(a.best, b.best) })
	if len(order) >= topK {
		if order[topK-1].best.Score > worst {
			complete = true
		}
		order = order[:topK]
	}
	var hits []scoredHit
	for _, g := range order {
		hits = append(hits, g.hits...)
	}
	slices.SortFunc(hits, cmpHits)
	return hits, complete
}

// annSearch runs one Milvus search; groups holds each hit's parent id
// when grouping.
func (s *Store) annSearch(ctx context.Context, l *leg, limit int, opts SearchOptions) ([]scoredHit, []string, error) {
	var out []scoredHit
	var groups []string
	err := s.retry(ctx, func(ctx context.Context, _ int) error {
		opt := milvusclient.NewSearchOption(s.cfg.Collection, limit, []entity.Vector{l.vec}).
			WithANNSField(l.field).
			WithOutputFields(FieldParentID, FieldDocID, FieldOrdinal)
		if opts.Filter != "" {
			opt = opt.WithFilter(opts.Filter)
		}
		if opts.GroupByParent {
			opt = opt.WithGroupByField(FieldParentID).WithGroupSize(max(opts.GroupSize, 1))
		}
		if !l.sparse && s.cfg.Index == IndexHNSW {
			opt = opt.WithAnnParam(milvusindex.NewHNSWAnnParam(max(s.cfg.HNSWEf, limit)))
		}
		res, err := s.cli.Search(ctx, opt)
		if err != nil {
			return err
		}
		if len(res) != 1 {
			return fmt.Errorf("milvus answered %d result sets for one query", len(res))
		}
		out, groups, err = l.hits(res[0], opts.GroupByParent)
		return err
	})
	return out, groups, err
}

func (l *leg) hits(rs milvusclient.ResultSet, grouped bool) ([]scoredHit, []string, error) {
	if rs.Err != nil {
		return nil, nil, rs.Err
	}
	n := rs.ResultCount
	if rs.IDs == nil || rs.IDs.Len() < n || len(rs.Scores) < n {
		return nil, nil, fmt.Errorf("milvus answered %d hits with %d ids and %d scores", n, lenOf(rs.IDs), len(rs.Scores))
	}
	parents, docs, ords := rs.GetColumn(FieldParentID), rs.GetColumn(FieldDocID), rs.GetColumn(FieldOrdinal)
	if n > 0 && (parents == nil || docs == nil || ords == nil) {
		return nil, nil, fmt.Errorf("milvus answered without the %s, %s and %s fields", FieldParentID, FieldDocID, FieldOrdinal)
	}
	out := make([]scoredHit, n)
	var groups []string
	for i := range n {
		id, err := rs.IDs.GetAsString(i)
		if err != nil {
			return nil, nil, err
		}
		p, err := parents.GetAsString(i)
		if err != nil {
			return nil, nil, err
		}
		d, err := docs.GetAsString(i)
		if err != nil {
			return nil, nil, err
		}
		o, err := ords.GetAsInt64(i)
		if err != nil {
			return nil, nil, err
		}
		out[i] = scoredHit{
			Hit: index.Hit{ID: id, ParentID: p, DocID: d, Ordinal: int(o), Score: l.score(rs.Scores[i])},
			raw: rs.Scores[i],
		}
		if grouped {
			g := p
			if rs.GroupByValue != nil {
				if g, err = rs.GroupByValue.GetAsString(i); err != nil {
					return nil, nil, err
				}
			}
			groups = append(groups, g)
		}
	}
	return out, groups, nil
}

func lenOf(c interface{ Len() int }) int {
	if c == nil {
		return 0
	}
	return c.Len()
}

// Fusion selects how SearchHybrid merges its sparse and dense results.
type Fusion int

const (
	// RRF is reciprocal rank fusion: a child scores Σ 1/(k + rank) over
	// the result lists it appears in, rank counted from 1.
	RRF Fusion = iota
	// Weighted sums each list's normalized score times its weight, with
	// Milvus's WeightedRanker normalization: IP 0.5 + atan(s)/π, COSINE
	// (1 + s)/2, L2 1 − 2·atan(d²)/π.
	Weighted
)

// DefaultRRFK is the k of reciprocal rank fusion.
const DefaultRRFK = 60

// HybridRequest asks for the TopK children best by both the sparse and the
// dense query.
type HybridRequest struct {
	Sparse *vector.Sparse
	Dense  []float32
	TopK   int
	// Fusion is RRF (default) or Weighted.
	Fusion Fusion
	// RRFK is the k of RRF (default 60).
	RRFK float64
	// SparseWeight and DenseWeight weigh the lists under Weighted; both
	// zero means 0.5 each.
	SparseWeight, DenseWeight float64
	// Candidates is how many children each list contributes (default
	// 2 × TopK, at most MaxTopK).
	Candidates int
	// Filter restricts both lists (see SearchOptions.Filter).
	Filter string
}

// SearchHybrid searches the sparse and the dense field and fuses the two
// result lists, each exact in order (ties by id), so fusion is
// deterministic. It needs a collection with a dense field and a dense
// query; an empty sparse query contributes no hits. Hits come best first,
// ties by ascending id, with the fused score.
func (s *Store) SearchHybrid(ctx context.Context, req HybridRequest) ([]index.Hit, error) {
	name := s.cfg.Collection
	switch {
	case req.TopK <= 0:
		return nil, fmt.Errorf("hybrid search %s: topk must be positive, got %d: %w", name, req.TopK, index.ErrInvalidInput)
	case s.cfg.Dense == 0:
		return nil, fmt.Errorf("hybrid search %s: the collection has no dense field: %w", name, index.ErrInvalidInput)
	case len(req.Dense) == 0:
		return nil, fmt.Errorf("hybrid search %s: the query has no dense vector: %w", name, index.ErrInvalidInput)
	case req.Fusion != RRF && req.Fusion != Weighted:
		return nil, fmt.Errorf("hybrid search %s: unknown fusion %d: %w", name, req.Fusion, index.ErrInvalidInput)
	case req.RRFK < 0 || req.SparseWeight < 0 || req.DenseWeight < 0:
		return nil, fmt.Errorf("hybrid search %s: negative fusion parameter: %w", name, index.ErrInvalidInput)
	}
	k := req.RRFK
	if k == 0 {
		k = DefaultRRFK
	}
	weights := [2]float64{req.SparseWeight, req.DenseWeight}
	if weights == [2]float64{} {
		weights = [2]float64{0.5, 0.5}
	}
	cands := req.Candidates
	if cands <= 0 {
		cands = 2 * req.TopK
	}
	cands = min(cands, MaxTopK)

	var legs [2]*leg
	if sp := req.Sparse; sp != nil && len(sp.Indices) > 0 {
		l, err := s.sparseLeg(sp)
		if err != nil {
			return nil, fmt.Errorf("hybrid search %s: %w", name, err)
		}
		legs[0] = l
	}
	dl, err := s.denseLeg(req.Dense)
	if err != nil {
		return nil, fmt.Errorf("hybrid search %s: %w", name, err)
	}
	legs[1] = dl

	fused := make(map[string]*scoredHit)
	for li, l := range legs {
		if l == nil {
			continue
		}
		hits, err := s.searchLeg(ctx, l, cands, SearchOptions{Filter: req.Filter})
		if err != nil {
			return nil, fmt.Errorf("hybrid search %s: %w", name, notFound(err))
		}
		for rank, h := range hits {
			var add float64
			if req.Fusion == RRF {
				add = 1 / (k + float64(rank+1))
			} else {
				add = weights[li] * normalize(l, float64(h.raw))
			}
			if f := fused[h.ID]; f != nil {
				f.Score += float32(add)
			} else {
				h.Score = float32(add)
				fused[h.ID] = &h
			}
		}
	}
	all := make([]scoredHit, 0, len(fused))
	for _, h := range fused {
		all = append(all, *h)
	}
	slices.SortFunc(all, cmpHits)
	all = all[:min(len(all), req.TopK)]
	out := make([]index.Hit, len(all))
	for i, h := range all {
		out[i] = h.Hit
	}
	return out, nil
}

// normalize maps a raw Milvus score into [0, 1] as Milvus's weighted
// ranker does.
func normalize(l *leg, raw float64) float64 {
	switch {
	case l.sparse || l.metric == index.IP:
		return 0.5 + math.Atan(raw)/math.Pi
	case l.metric == index.Cosine:
		return (1 + raw) / 2
	}
	return 1 - 2*math.Atan(raw)/math.Pi
}

// SearchByParent implements index.ParentGrouper with Milvus grouping
// search on parent_id. A query with both a sparse and a dense part is not
// grouped by Milvus; it returns ErrInvalidInput so callers group it.
func (s *Store) SearchByParent(ctx context.Context, req index.SearchRequest, groupSize int) ([]index.Hit, error) {
	if req.Vector.Sparse != nil && len(req.Vector.Sparse.Indices) > 0 && len(req.Vector.Dense) > 0 {
		return nil, fmt.Errorf("search %s: grouping a hybrid search: %w", s.cfg.Collection, index.ErrInvalidInput)
	}
	return s.SearchWith(ctx, req, SearchOptions{GroupByParent: true, GroupSize: groupSize})
}
