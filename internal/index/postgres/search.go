package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// Search returns at most req.TopK children by descending score, ties by
// ascending id (byte order), as index.Searcher requires.
//
// A sparse query is exact: every child sharing a term with it is scored by
// the sparsevec inner product, and only children scoring above zero are
// returned, as the embedded store does. A dense query walks the HNSW index
// of the dense column with ef_search raised to TopK (and pgvector's
// iterative scan past 1,000), scoring as the embedded store does: cosine
// similarity, inner product, or the negated Euclidean distance. A query
// with neither part returns no hits; one with both fails with
// index.ErrInvalidInput: the retrieval core fuses a sparse and a
// dense search itself. MaxPostings is not enforced here (the postings are
// not counted before searching), as with Milvus.
func (s *Store) Search(ctx context.Context, req index.SearchRequest) ([]index.Hit, error) {
	if req.TopK <= 0 {
		return nil, fmt.Errorf("search %s: topk must be positive, got %d: %w", s.cfg.Table, req.TopK, index.ErrInvalidInput)
	}
	sp, dense := req.Vector.Sparse, req.Vector.Dense
	if sp != nil && len(sp.Indices) == 0 && len(sp.Values) == 0 {
		sp = nil
	}
	topK := min(req.TopK, MaxTopK)
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var hits []index.Hit
	var err error
	switch {
	case sp != nil && len(dense) > 0:
		return nil, fmt.Errorf("search %s: query sets both sparse and dense vectors; search each and fuse them: %w", s.cfg.Table, index.ErrInvalidInput)
	case sp != nil:
		hits, err = s.searchSparse(ctx, sp, topK)
	case len(dense) > 0:
		hits, err = s.searchDense(ctx, dense, topK)
	}
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", s.cfg.Table, err)
	}
	return hits, nil
}

// SearchFiltered is Search restricted to the children keep accepts, by
// over-fetching (index.OverFetch): keep is a function of this process,
// which the database cannot run.
func (s *Store) SearchFiltered(ctx context.Context, req index.SearchRequest, keep func(index.Hit) bool) ([]index.Hit, error) {
	return index.OverFetch(ctx, s.Search, req, keep)
}

// searchSparse scores the children sharing a term with q, exactly.
func (s *Store) searchSparse(ctx context.Context, q *vector.Sparse, topK int) ([]index.Hit, error) {
	if err := checkSparse(q); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	terms := termsText(q)
	if terms == "{}" {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, parent_id, doc_id, ordinal, sparse <#> $1::sparsevec AS d
FROM `+s.cfg.qualified(s.cfg.Table)+`
WHERE terms && $2::integer[] AND sparse <#> $1::sparsevec < 0
ORDER BY d, id LIMIT $3`, sparseText(q), terms, topK)
	if err != nil {
		return nil, notFound(err)
	}
	return collectHits(rows, func(d float64) float32 { return float32(-d) })
}

// searchDense walks the HNSW index of the dense column.
func (s *Store) searchDense(ctx context.Context, q []float32, topK int) ([]index.Hit, error) {
	if err := checkFinite(q); err != nil {
		return nil, fmt.Errorf("query: dense vector: %w", err)
	}
	if s.cfg.Dense == 0 {
		return nil, nil
	}
	if len(q) != s.cfg.Dense {
		return nil, fmt.Errorf("dense query has %d dims, table has %d: %w", len(q), s.cfg.Dense, index.ErrDimensionMismatch)
	}
	if s.cfg.metric == index.Cosine && !slices.ContainsFunc(q, func(x float32) bool { return x != 0 }) {
		return nil, nil // a zero query has no cosine, as in the embedded store
	}
	op, score := distance(s.cfg.metric)
	var hits []index.Hit
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		ef := min(max(s.cfg.HNSWEf, topK), 1000)
		if _, err := tx.Exec(ctx, `SELECT set_config('hnsw.ef_search', $1, true)`, strconv.Itoa(ef)); err != nil {
			return err
		}
		if topK > ef {
			// Past ef_search, pgvector 0.8 goes on scanning the graph in
			// order instead of stopping short.
			if _, err := tx.Exec(ctx, `SELECT set_config('hnsw.iterative_scan', 'strict_order', true)`); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `SELECT id, parent_id, doc_id, ordinal, dense `+op+` $1::vector AS d
FROM `+s.cfg.qualified(s.cfg.Table)+` WHERE dense IS NOT NULL
ORDER BY dense `+op+` $1::vector LIMIT $2`, denseText(q), topK)
		if err != nil {
			return err
		}
		hits, err = collectHits(rows, score)
		return err
	})
	if err != nil {
		return nil, notFound(err)
	}
	// The index orders by distance only; ties go to the smaller id, and a
	// NaN (a zero row under cosine) is no hit.
	hits = slices.DeleteFunc(hits, func(h index.Hit) bool { return h.Score != h.Score })
	slices.SortStableFunc(hits, func(a, b index.Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
	})
	return hits, nil
}

// distance is pgvector's operator of a metric and how its distance
// becomes the store's score.
func distance(m index.Metric) (string, func(float64) float32) {
	switch m {
	case index.IP:
		return "<#>", func(d float64) float32 { return float32(-d) }
	case index.L2:
		return "<->", func(d float64) float32 { return float32(-d) }
	}
	return "<=>", func(d float64) float32 { return float32(1 - d) }
}

// collectHits reads (id, parent_id, doc_id, ordinal, distance) rows.
func collectHits(rows pgx.Rows, score func(float64) float32) ([]index.Hit, error) {
	var out []index.Hit
	for rows.Next() {
		var h index.Hit
		var ord int32
		var d float64
		if err := rows.Scan(&h.ID, &h.ParentID, &h.DocID, &ord, &d); err != nil {
			return nil, err
		}
		h.Ordinal, h.Score = int(ord), score(d)
		out = append(out, h)
	}
	return out, rows.Err()
}
