package embedded

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// model is the brute-force reference: the live records by id.
type model map[string]index.Record

func (m model) upsert(recs []index.Record) {
	for _, r := range recs {
		m[r.ID] = r
	}
}

// search scores every live record directly: vector.Sparse.Dot for sparse
// queries (keeping only positive scores), the store's kernels for dense.
func (m model) search(req index.SearchRequest, metric index.Metric) []index.Hit {
	var hits []index.Hit
	q := req.Vector
	dq := q.Dense
	if len(dq) > 0 && metric == index.Cosine {
		dq = normalized(dq)
	}
	for _, r := range m {
		var s float32
		switch {
		case q.Sparse != nil && len(q.Sparse.Indices) > 0:
			if r.Vector.Sparse == nil {
				continue
			}
			s = r.Vector.Sparse.Dot(*q.Sparse)
			if !(s > 0) {
				continue
			}
		case len(dq) > 0:
			if len(r.Vector.Dense) == 0 {
				continue
			}
			s = refDense(dq, r.Vector.Dense, metric)
			if s != s {
				continue
			}
		default:
			continue
		}
		hits = append(hits, index.Hit{ID: r.ID, ParentID: r.ParentID, DocID: r.DocID, Ordinal: r.Ordinal, Score: s})
	}
	slices.SortFunc(hits, func(a, b index.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(hits) > req.TopK {
		hits = hits[:req.TopK]
	}
	return hits
}

func refDense(q, v []float32, metric index.Metric) float32 {
	switch metric {
	case index.Cosine:
		n := normalized(v)
		if n == nil {
			n = make([]float32, len(v))
		}
		return dot(q, n)
	case index.L2:
		return -l2(q, v)
	}
	return dot(q, v)
}

// sameHits fails unless got equals want exactly, scores compared bitwise.
func sameHits(t *testing.T, label string, got, want []index.Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d hits, want %d\ngot  %v\nwant %v", label, len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: hit %d = %+v, want %+v", label, i, got[i], want[i])
		}
	}
}

func mustStore(t testing.TB, opts Options) *Store {
	t.Helper()
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustUpsert(t testing.TB, e *Store, recs ...index.Record) {
	t.Helper()
	if err := e.Upsert(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
}

func mustSearch(t testing.TB, e *Store, req index.SearchRequest) []index.Hit {
	t.Helper()
	hits, err := e.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func sp(pairs ...float32) *vector.Sparse {
	s := &vector.Sparse{}
	for i := 0; i < len(pairs); i += 2 {
		s.Indices = append(s.Indices, uint32(pairs[i]))
		s.Values = append(s.Values, pairs[i+1])
	}
	return s
}

func rec(id string, v vector.Vector) index.Record {
	return index.Record{ID: id, ParentID: "p-" + id[:1], DocID: "d", Ordinal: len(id), Vector: v}
}

// randSparse draws a sparse vector over a small vocabulary. Coarse values
// make equal scores (and so the id tie-break) common; negative and zero
// values exercise cancellation.
func randSparse(r *rand.Rand, vocab, maxTerms int, coarse bool) *vector.Sparse {
	n := r.IntN(maxTerms + 1)
	seen := map[uint32]bool{}
	for range n {
		seen[uint32(r.IntN(vocab))] = true
	}
	s := &vector.Sparse{}
	for t := range seen {
		s.Indices = append(s.Indices, t)
	}
	slices.Sort(s.Indices)
	for range s.Indices {
		var v float32
		switch {
		case coarse:
			v = float32(r.IntN(4))
		case r.IntN(10) == 0:
			v = -r.Float32()
		default:
			v = r.Float32() * 3
		}
		s.Values = append(s.Values, v)
	}
	return s
}

func randDense(r *rand.Rand, dims int, coarse bool) []float32 {
	v := make([]float32, dims)
	for i := range v {
		if coarse {
			v[i] = float32(r.IntN(3) - 1)
		} else {
			v[i] = float32(r.NormFloat64())
		}
	}
	return v
}

func randRecord(r *rand.Rand, id string, dims int, coarse bool) index.Record {
	rec := index.Record{
		ID:       id,
		ParentID: fmt.Sprintf("p%d", r.IntN(20)),
		DocID:    fmt.Sprintf("d%d", r.IntN(5)),
		Ordinal:  r.IntN(100),
	}
	if r.IntN(8) != 0 {
		rec.Vector.Sparse = randSparse(r, 40, 8, coarse)
	}
	if dims > 0 && r.IntN(8) != 0 {
		rec.Vector.Dense = randDense(r, dims, coarse)
	}
	return rec
}
