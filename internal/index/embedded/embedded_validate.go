package embedded

import (
	"fmt"
	"math"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// checkRecords validates a batch without touching the store and returns the
// batch's dense dimension (0 when no record has a dense vector).
func checkRecords(records []index.Record) (int, error) {
	dims := 0
	for i := range records {
		r := &records[i]
		if r.ID == "" {
			return 0, fmt.Errorf("record %d: empty id: %w", i, index.ErrInvalidInput)
		}
		if r.Ordinal < math.MinInt32 || r.Ordinal > math.MaxInt32 {
			return 0, fmt.Errorf("record %q: ordinal %d out of int32 range: %w", r.ID, r.Ordinal, index.ErrInvalidInput)
		}
		if err := checkSparse(r.Vector.Sparse); err != nil {
			return 0, fmt.Errorf("record %q: %w", r.ID, err)
		}
		if err := checkFinite(r.Vector.Dense); err != nil {
			return 0, fmt.Errorf("record %q: dense vector: %w", r.ID, err)
		}
		d := len(r.Vector.Dense)
		if d == 0 {
			continue
		}
		if dims != 0 && d != dims {
			return 0, fmt.Errorf("record %q: dense vector has %d dims, batch has %d: %w",
				r.ID, d, dims, index.ErrDimensionMismatch)
		}
		dims = d
	}
	return dims, nil
}

// checkQuery validates a request and returns its sparse or dense part; both
// are nil for an empty query.
func checkQuery(req index.SearchRequest) (*vector.Sparse, []float32, error) {
	if req.TopK <= 0 {
		return nil, nil, fmt.Errorf("topk must be positive, got %d: %w", req.TopK, index.ErrInvalidInput)
	}
	sp := req.Vector.Sparse
	if sp != nil && len(sp.Indices) == 0 && len(sp.Values) == 0 {
		sp = nil
	}
	dense := req.Vector.Dense
	if len(dense) == 0 {
		dense = nil
	}
	if sp != nil && dense != nil {
		return nil, nil, fmt.Errorf("query sets both sparse and dense vectors, hybrid search is not supported: %w", index.ErrInvalidInput)
	}
	if err := checkSparse(sp); err != nil {
		return nil, nil, fmt.Errorf("query: %w", err)
	}
	if err := checkFinite(dense); err != nil {
		return nil, nil, fmt.Errorf("query: dense vector: %w", err)
	}
	return sp, dense, nil
}

// checkSparse enforces the vector.Sparse contract the exact search relies
// on: equal lengths, strictly increasing indices, finite values.
func checkSparse(s *vector.Sparse) error {
	if s == nil {
		return nil
	}
	if len(s.Indices) != len(s.Values) {
		return fmt.Errorf("sparse vector has %d indices but %d values: %w",
			len(s.Indices), len(s.Values), index.ErrInvalidInput)
	}
	for i, t := range s.Indices {
		if i > 0 && t <= s.Indices[i-1] {
			return fmt.Errorf("sparse indices not strictly increasing at position %d: %w", i, index.ErrInvalidInput)
		}
	}
	if err := checkFinite(s.Values); err != nil {
		return fmt.Errorf("sparse vector: %w", err)
	}
	return nil
}

func checkFinite(v []float32) error {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("value %d is not finite: %w", i, index.ErrInvalidInput)
		}
	}
	return nil
}
