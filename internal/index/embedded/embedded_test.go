package embedded

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

func TestEmbeddedUpsertReplaceDeleteCount(t *testing.T) {
	ctx := context.Background()
	e := mustStore(t, Options{})
	steps := []struct {
		name   string
		upsert []index.Record
		del    []string
		count  int
		query  *vector.Sparse
		want   []string
	}{
		{name: "insert", upsert: []index.Record{
			rec("a", vector.Vector{Sparse: sp(1, 1)}),
			rec("b", vector.Vector{Sparse: sp(1, 2)}),
			rec("c", vector.Vector{Sparse: sp(2, 5)}),
		}, count: 3, query: sp(1, 1), want: []string{"b", "a"}},
		{name: "replace moves a to term 2", upsert: []index.Record{
			rec("a", vector.Vector{Sparse: sp(2, 9)}),
		}, count: 3, query: sp(1, 1), want: []string{"b"}},
		{name: "replaced vector is searchable", count: 3, query: sp(2, 1), want: []string{"a", "c"}},
		{name: "last duplicate in batch wins", upsert: []index.Record{
			rec("d", vector.Vector{Sparse: sp(3, 1)}),
			rec("d", vector.Vector{Sparse: sp(3, 7)}),
		}, count: 4, query: sp(3, 1), want: []string{"d"}},
		{name: "delete", del: []string{"b", "missing"}, count: 3, query: sp(1, 1), want: nil},
		{name: "delete is idempotent", del: []string{"b"}, count: 3, query: sp(2, 1), want: []string{"a", "c"}},
		{name: "reinsert deleted id", upsert: []index.Record{
			rec("b", vector.Vector{Sparse: sp(1, 4)}),
		}, count: 4, query: sp(1, 1), want: []string{"b"}},
		{name: "delete everything", del: []string{"a", "b", "c", "d"}, count: 0, query: sp(1, 1, 2, 1, 3, 1)},
	}
	for _, st := range steps {
		if st.upsert != nil {
			mustUpsert(t, e, st.upsert...)
		}
		if st.del != nil {
			if err := e.Delete(ctx, st.del); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		if n, _ := e.Count(ctx); n != st.count {
			t.Fatalf("%s: count %d, want %d", st.name, n, st.count)
		}
		hits := mustSearch(t, e, index.SearchRequest{Vector: vector.Vector{Sparse: st.query}, TopK: 10})
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		if len(ids) != len(st.want) {
			t.Fatalf("%s: hits %v, want %v", st.name, ids, st.want)
		}
		for i := range ids {
			if ids[i] != st.want[i] {
				t.Fatalf("%s: hits %v, want %v", st.name, ids, st.want)
			}
		}
	}
}

func TestEmbeddedOrderingAndTieBreak(t *testing.T) {
	e := mustStore(t, Options{})
	mustUpsert(t, e,
		index.Record{ID: "z", ParentID: "P1", DocID: "D", Ordinal: 3, Vector: vector.Vector{Sparse: sp(1, 2)}},
		index.Record{ID: "m", ParentID: "P1", DocID: "D", Ordinal: 1, Vector: vector.Vector{Sparse: sp(1, 2)}},
		index.Record{ID: "a", ParentID: "P2", DocID: "D", Ordinal: 2, Vector: vector.Vector{Sparse: sp(1, 1)}},
		index.Record{ID: "b", ParentID: "P2", DocID: "D", Ordinal: 0, Vector: vector.Vector{Sparse: sp(1, 2)}},
		index.Record{ID: "neg", ParentID: "P3", DocID: "D", Vector: vector.Vector{Sparse: sp(1, -1)}},
		index.Record{ID: "zero", ParentID: "P3", DocID: "D", Vector: vector.Vector{Sparse: sp(1, 0, 2, 3)}},
	)
	tests := []struct {
		name string
		topK int
		want []index.Hit
	}{
		{"tie broken by ascending id", 3, []index.Hit{
			{ID: "b", ParentID: "P2", DocID: "D", Ordinal: 0, Score: 2},
			{ID: "m", ParentID: "P1", DocID: "D", Ordinal: 1, Score: 2},
			{ID: "z", ParentID: "P1", DocID: "D", Ordinal: 3, Score: 2},
		}},
		{"cut inside a tie keeps smallest ids", 2, []index.Hit{
			{ID: "b", ParentID: "P2", DocID: "D", Ordinal: 0, Score: 2},
			{ID: "m", ParentID: "P1", DocID: "D", Ordinal: 1, Score: 2},
		}},
		{"topk beyond count returns only positive scores", 100, []index.Hit{
			{ID: "b", ParentID: "P2", DocID: "D", Ordinal: 0, Score: 2},
			{ID: "m", ParentID: "P1", DocID: "D", Ordinal: 1, Score: 2},
			{ID: "z", ParentID: "P1", DocID: "D", Ordinal: 3, Score: 2},
			{ID: "a", ParentID: "P2", DocID: "D", Ordinal: 2, Score: 1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustSearch(t, e, index.SearchRequest{Vector: vector.Vector{Sparse: sp(1, 1)}, TopK: tc.topK})
			sameHits(t, tc.name, got, tc.want)
		})
	}
}

func TestEmbeddedDenseMetrics(t *testing.T) {
	recs := []index.Record{
		{ID: "x", Vector: vector.Vector{Dense: []float32{1, 0}}},
		{ID: "y", Vector: vector.Vector{Dense: []float32{0, 2}}},
		{ID: "far", Vector: vector.Vector{Dense: []float32{3, 4}}},
		{ID: "sparse-only", Vector: vector.Vector{Sparse: sp(1, 1)}},
	}
	tests := []struct {
		metric index.Metric
		query  []float32
		want   []index.Hit
	}{
		{index.IP, []float32{1, 1}, []index.Hit{{ID: "far", Score: 7}, {ID: "y", Score: 2}, {ID: "x", Score: 1}}},
		{index.Cosine, []float32{0, 5}, []index.Hit{{ID: "y", Score: 1}, {ID: "far", Score: 0.8}, {ID: "x", Score: 0}}},
		{index.L2, []float32{1, 0}, []index.Hit{{ID: "x", Score: 0}, {ID: "y", Score: -2.236068}, {ID: "far", Score: -4.472136}}},
		{index.Cosine, []float32{0, 0}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.metric.String(), func(t *testing.T) {
			e := mustStore(t, Options{Metric: tc.metric})
			mustUpsert(t, e, recs...)
			got := mustSearch(t, e, index.SearchRequest{Vector: vector.Vector{Dense: tc.query}, TopK: 10})
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i].ID != tc.want[i].ID || abs32(got[i].Score-tc.want[i].Score) > 1e-5 {
					t.Fatalf("hit %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

func TestEmbeddedErrors(t *testing.T) {
	ctx := context.Background()
	e := mustStore(t, Options{})
	mustUpsert(t, e, index.Record{ID: "a", Vector: vector.Vector{Dense: []float32{1, 2, 3}}})
	nan := float32(0)
	nan /= nan
	upserts := []struct {
		name string
		recs []index.Record
		want error
	}{
		{"dimension mismatch with store", []index.Record{{ID: "b", Vector: vector.Vector{Dense: []float32{1, 2}}}}, index.ErrDimensionMismatch},
		{"dimension mismatch inside batch", []index.Record{
			{ID: "b", Vector: vector.Vector{Dense: []float32{1, 2, 3}}},
			{ID: "c", Vector: vector.Vector{Dense: []float32{1, 2, 3, 4}}},
		}, index.ErrDimensionMismatch},
		{"empty id", []index.Record{{Vector: vector.Vector{Sparse: sp(1, 1)}}}, index.ErrInvalidInput},
		{"unsorted indices", []index.Record{{ID: "b", Vector: vector.Vector{Sparse: sp(2, 1, 1, 1)}}}, index.ErrInvalidInput},
		{"duplicate indices", []index.Record{{ID: "b", Vector: vector.Vector{Sparse: sp(1, 1, 1, 1)}}}, index.ErrInvalidInput},
		{"length mismatch", []index.Record{{ID: "b", Vector: vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{1}}}}}, index.ErrInvalidInput},
		{"nan weight", []index.Record{{ID: "b", Vector: vector.Vector{Sparse: sp(1, nan)}}}, index.ErrInvalidInput},
		{"nan dense", []index.Record{{ID: "b", Vector: vector.Vector{Dense: []float32{1, nan, 3}}}}, index.ErrInvalidInput},
		{"ordinal overflow", []index.Record{{ID: "b", Ordinal: 1 << 40}}, index.ErrInvalidInput},
	}
	for _, tc := range upserts {
		t.Run("upsert "+tc.name, func(t *testing.T) {
			err := e.Upsert(ctx, append([]index.Record{{ID: "valid-first", Vector: vector.Vector{Sparse: sp(1, 1)}}}, tc.recs...))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if n, _ := e.Count(ctx); n != 1 {
				t.Fatalf("failed batch changed the store: count %d", n)
			}
		})
	}
	searches := []struct {
		name string
		req  index.SearchRequest
		want error
	}{
		{"dense dims", index.SearchRequest{Vector: vector.Vector{Dense: []float32{1}}, TopK: 1}, index.ErrDimensionMismatch},
		{"zero topk", index.SearchRequest{Vector: vector.Vector{Sparse: sp(1, 1)}}, index.ErrInvalidInput},
		{"hybrid", index.SearchRequest{Vector: vector.Vector{Sparse: sp(1, 1), Dense: []float32{1, 2, 3}}, TopK: 1}, index.ErrInvalidInput},
		{"unsorted query", index.SearchRequest{Vector: vector.Vector{Sparse: sp(3, 1, 1, 1)}, TopK: 1}, index.ErrInvalidInput},
	}
	for _, tc := range searches {
		t.Run("search "+tc.name, func(t *testing.T) {
			if _, err := e.Search(ctx, tc.req); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Search(cancelled, index.SearchRequest{Vector: vector.Vector{Sparse: sp(1, 1)}, TopK: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled search: %v", err)
	}
	if _, err := New(Options{Metric: 9}); !errors.Is(err, index.ErrInvalidInput) {
		t.Fatalf("bad metric: %v", err)
	}
}

func TestEmbeddedEmptyQueries(t *testing.T) {
	empty := mustStore(t, Options{})
	e := mustStore(t, Options{})
	mustUpsert(t, e, rec("a", vector.Vector{Sparse: sp(1, 1)}), rec("b", vector.Vector{}))
	tests := []struct {
		name  string
		store *Store
		v     vector.Vector
	}{
		{"no vector", e, vector.Vector{}},
		{"empty sparse", e, vector.Vector{Sparse: &vector.Sparse{}}},
		{"unknown term", e, vector.Vector{Sparse: sp(99, 1)}},
		{"zero weight", e, vector.Vector{Sparse: sp(1, 0)}},
		{"dense on sparse-only store", e, vector.Vector{Dense: []float32{1}}},
		{"empty store sparse", empty, vector.Vector{Sparse: sp(1, 1)}},
		{"empty store dense", empty, vector.Vector{Dense: []float32{1, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if hits := mustSearch(t, tc.store, index.SearchRequest{Vector: tc.v, TopK: 5}); len(hits) != 0 {
				t.Fatalf("hits = %v, want none", hits)
			}
		})
	}
}

func TestParseMetric(t *testing.T) {
	for in, want := range map[string]index.Metric{"": index.IP, "ip": index.IP, "COSINE": index.Cosine, " l2 ": index.L2} {
		if got, err := index.ParseMetric(in); err != nil || got != want {
			t.Fatalf("ParseMetric(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := index.ParseMetric("hamming"); !errors.Is(err, index.ErrInvalidInput) {
		t.Fatalf("ParseMetric(hamming) = %v", err)
	}
}

func TestEmbeddedCompactionBoundsGrowth(t *testing.T) {
	e := mustStore(t, Options{Metric: index.Cosine})
	for i := range 200 {
		mustUpsert(t, e,
			index.Record{ID: "same", ParentID: "p", Vector: vector.Vector{Sparse: sp(1, float32(i+1), 2, 1), Dense: []float32{1, float32(i)}}},
			index.Record{ID: "other", ParentID: "q", Vector: vector.Vector{Sparse: sp(1, 1)}},
		)
	}
	st := e.Stats()
	if st.Records != 2 || st.Postings > 8 || st.DenseVectors > 2 || st.Tombstones > 1 {
		t.Fatalf("postings grow under repeated upserts: %+v", st)
	}
	hits := mustSearch(t, e, index.SearchRequest{Vector: vector.Vector{Sparse: sp(1, 1)}, TopK: 5})
	if len(hits) != 2 || hits[0].ID != "same" || hits[0].Score != 200 {
		t.Fatalf("hits after churn: %+v", hits)
	}
}

func TestEmbeddedConcurrentSearch(t *testing.T) {
	ctx := context.Background()
	e := mustStore(t, Options{})
	for i := range 300 {
		mustUpsert(t, e, rec(string(rune('a'+i%26))+string(rune('0'+i%10))+"-"+strconv.Itoa(i), vector.Vector{Sparse: sp(float32(i%7), 1, 10, float32(i))}))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				hits, err := e.Search(ctx, index.SearchRequest{Vector: vector.Vector{Sparse: sp(float32((g+i)%7), 1, 10, 1)}, TopK: 5})
				if err != nil || len(hits) == 0 {
					t.Errorf("search: %v %v", hits, err)
					return
				}
				for j := 1; j < len(hits); j++ {
					if hits[j].Score > hits[j-1].Score {
						t.Errorf("unordered hits %v", hits)
						return
					}
				}
			}
		}()
	}
	for i := range 200 {
		id := "w-" + strconv.Itoa(i%40)
		mustUpsert(t, e, rec(id, vector.Vector{Sparse: sp(10, float32(i+1))}))
		if i%3 == 0 {
			if err := e.Delete(ctx, []string{"w-" + strconv.Itoa((i+7)%40)}); err != nil {
				t.Fatal(err)
			}
		}
		_ = e.Stats()
	}
	wg.Wait()
}
