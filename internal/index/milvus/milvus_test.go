package milvus_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/milvus-io/milvus/pkg/v2/util/merr"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/milvustest"
)

var collectionSeq atomic.Int64

// testConfig is a configuration for a fresh collection on srv, with a
// quick retry policy.
func testConfig(srv *milvustest.Server) milvus.Config {
	return milvus.Config{
		Address:     srv.Addr(),
		Collection:  fmt.Sprintf("children_%d", collectionSeq.Add(1)),
		InsertBatch: 200,
		Retry:       milvus.Retry{Attempts: 4, Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
	}
}

// TestSuiteOnTestServer runs the shared suite against milvustest.
func TestSuiteOnTestServer(t *testing.T) {
	srv := milvustest.Start(t)
	suite{config: func(*testing.T) milvus.Config { return testConfig(srv) }, strict: true}.run(t)
}

func openStore(t *testing.T, cfg milvus.Config) *milvus.Store {
	t.Helper()
	st, err := milvus.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	return st
}

func TestRetriesTransientFailures(t *testing.T) {
	srv := milvustest.Start(t)
	ctx := context.Background()
	f := corpus(t)
	st := openStore(t, testConfig(srv))
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	name := st.Name()

	// Failures the client does not retry itself: a server-side deadline and
	// Milvus's "unavailable" status. The store retries the batch as an
	// upsert and succeeds.
	srv.FailNext("Insert", 1, codes.DeadlineExceeded)
	srv.Inject("Upsert", 1, milvustest.Fault{Err: merr.ErrServiceUnavailable})
	if err := st.Insert(ctx, f.records[:300], nil); err != nil {
		t.Fatalf("insert with transient failures: %v", err)
	}
	if got := srv.Calls("Upsert"); got != 2 {
		t.Fatalf("%d upserts, want 2 (retries of the failed batch)", got)
	}
	// A lost answer: the insert took effect, the retry must not duplicate.
	srv.Inject("Insert", 1, milvustest.Fault{After: true, Code: codes.DeadlineExceeded})
	if err := st.Insert(ctx, f.records[300:400], nil); err != nil {
		t.Fatalf("insert with a lost answer: %v", err)
	}
	if n := srv.RowCount(name); n != 400 {
		t.Fatalf("%d rows, want 400", n)
	}
	// The client retries Unavailable by itself underneath.
	srv.FailNext("Flush", 2, codes.Unavailable)
	// Rate limiting and a load still in progress are retried too.
	srv.Inject("Query", 1, milvustest.Fault{Err: merr.ErrServiceRateLimit})
	srv.SetLoadDelay(150 * time.Millisecond)
	if err := st.Finish(ctx, 400); err != nil {
		t.Fatalf("finish: %v", err)
	}

	// A failure that is not transient is not retried.
	before := srv.Calls("Search")
	srv.FailNext("Search", 1, codes.Internal)
	_, err := st.Search(ctx, index.SearchRequest{Vector: f.queries[0], TopK: 3})
	if err == nil || errors.Is(err, milvus.ErrUnavailable) {
		t.Fatalf("search with an internal error: %v", err)
	}
	if got := srv.Calls("Search") - before; got != 1 {
		t.Fatalf("%d searches for a permanent failure", got)
	}
	// An outage longer than the policy ends in ErrUnavailable.
	srv.FailNext("Search", 10, codes.DeadlineExceeded)
	_, err = st.Search(ctx, index.SearchRequest{Vector: f.queries[0], TopK: 3})
	if !errors.Is(err, milvus.ErrUnavailable) {
		t.Fatalf("search during an outage: %v", err)
	}
	srv.ClearFaults()
	if _, err := st.Search(ctx, index.SearchRequest{Vector: f.queries[0], TopK: 3}); err != nil {
		t.Fatalf("search after the outage: %v", err)
	}
}

func TestSearchBeforeFinishFails(t *testing.T) {
	srv := milvustest.Start(t)
	ctx := context.Background()
	f := corpus(t)
	st := openStore(t, testConfig(srv))
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Insert(ctx, f.records[:10], nil); err != nil {
		t.Fatal(err)
	}
	_, err := st.Search(ctx, index.SearchRequest{Vector: f.queries[0], TopK: 3})
	if !errors.Is(err, merr.ErrIndexNotFound) && !errors.Is(err, merr.ErrCollectionNotLoaded) {
		t.Fatalf("search of an unfinished collection: %v", err)
	}
	if _, err := st.Count(ctx); !errors.Is(err, merr.ErrCollectionNotLoaded) {
		t.Fatalf("count of an unfinished collection: %v", err)
	}
	missing := testConfig(srv)
	other := openStore(t, missing)
	if _, err := other.Count(ctx); !errors.Is(err, milvus.ErrNotFound) {
		t.Fatalf("count of a missing collection: %v", err)
	}
	if err := other.Insert(ctx, f.records[:1], nil); !errors.Is(err, milvus.ErrNotFound) {
		t.Fatalf("insert into a missing collection: %v", err)
	}
}

// denseRecords gives the fixture's children random dense vectors.
func denseRecords(f *fixture, dim int, n int) []index.Record {
	r := rand.New(rand.NewPCG(1, 2))
	out := slices.Clone(f.records[:n])
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i].Vector.Dense = v
	}
	return out
}

func TestDenseSearchMatchesEmbedded(t *testing.T) {
	srv := milvustest.Start(t)
	ctx := context.Background()
	f := corpus(t)
	const dim = 16
	recs := denseRecords(f, dim, 600)
	for _, metric := range []string{"IP", "COSINE", "L2"} {
		for _, idx := range []string{milvus.IndexHNSW, milvus.IndexAuto} {
			t.Run(metric+"_"+idx, func(t *testing.T) {
				cfg := testConfig(srv)
				cfg.Dense, cfg.Metric, cfg.Index = dim, metric, idx
				st := openStore(t, cfg)
				if err := st.Create(ctx); err != nil {
					t.Fatal(err)
				}
				if err := st.Insert(ctx, recs, nil); err != nil {
					t.Fatal(err)
				}
				if err := st.Finish(ctx, len(recs)); err != nil {
					t.Fatal(err)
				}
				wantType := map[string]string{milvus.IndexHNSW: "HNSW", milvus.IndexAuto: "AUTOINDEX"}[idx]
				if p := srv.IndexParams(st.Name(), milvus.FieldDense); p["index_type"] != wantType || p["metric_type"] != metric {
					t.Fatalf("dense index %v", p)
				}
				m, _ := index.ParseMetric(metric)
				ref, _ := embedded.New(embedded.Options{Metric: m})
				if err := ref.Upsert(ctx, recs); err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewPCG(5, 6))
				for range 20 {
					q := make([]float32, dim)
					for j := range q {
						q[j] = float32(r.NormFloat64())
					}
					req := index.SearchRequest{Vector: vector.Vector{Dense: q}, TopK: 100}
					want, _ := ref.Search(ctx, req)
					got, err := st.Search(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(want) {
						t.Fatalf("%d hits, want %d", len(got), len(want))
					}
					for i := range got {
						if got[i].ID != want[i].ID || math.Abs(float64(got[i].Score-want[i].Score)) > 1e-4 {
							t.Fatalf("hit %d: %+v, want %+v", i, got[i], want[i])
						}
					}
				}
				if _, err := st.Search(ctx, index.SearchRequest{Vector: vector.Vector{Dense: make([]float32, 3)}, TopK: 1}); !errors.Is(err, index.ErrDimensionMismatch) {
					t.Fatalf("dense query of the wrong size: %v", err)
				}
			})
		}
	}
}

func TestSearchHybrid(t *testing.T) {
	srv := milvustest.Start(t)
	ctx := context.Background()
	f := corpus(t)
	const dim = 8
	recs := denseRecords(f, dim, 500)
	cfg := testConfig(srv)
	cfg.Dense, cfg.Metric = dim, "COSINE"
	st := openStore(t, cfg)
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Insert(ctx, recs, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(ctx, len(recs)); err != nil {
		t.Fatal(err)
	}
	dq := recs[3].Vector.Dense
	for qi, sq := range f.queries[:10] {
		sparse, err := st.Search(ctx, index.SearchRequest{Vector: vector.Vector{Sparse: sq.Sparse}, TopK: 20})
		if err != nil {
			t.Fatal(err)
		}
		dense, err := st.Search(ctx, index.SearchRequest{Vector: vector.Vector{Dense: dq}, TopK: 20})
		if err != nil {
			t.Fatal(err)
		}
		// Expected RRF: both lists exact and tie-sorted, so fused scores
		// and their order are deterministic.
		fused := map[string]float64{}
		for _, list := range [][]index.Hit{sparse, dense} {
			for rank, h := range list {
				fused[h.ID] += 1 / (60 + float64(rank+1))
			}
		}
		got, err := st.SearchHybrid(ctx, milvus.HybridRequest{Sparse: sq.Sparse, Dense: dq, TopK: 10, Candidates: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != min(10, len(fused)) {
			t.Fatalf("query %d: %d hybrid hits", qi, len(got))
		}
		// A plain Search with both parts is the default hybrid search (a
		// query whose sparse part is empty is a dense search).
		viaSearch, err := st.Search(ctx, index.SearchRequest{Vector: vector.Vector{Sparse: sq.Sparse, Dense: dq}, TopK: 10})
		if err != nil {
			t.Fatal(err)
		}
		byDefault, err := st.SearchHybrid(ctx, milvus.HybridRequest{Sparse: sq.Sparse, Dense: dq, TopK: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(sq.Sparse.Indices) > 0 && (!reflect.DeepEqual(viaSearch, byDefault) || len(viaSearch) == 0) {
			t.Fatalf("query %d: Search with both parts %v, default hybrid %v", qi, viaSearch, byDefault)
		}
		for i, h := range got {
			if math.Abs(float64(h.Score)-fused[h.ID]) > 1e-6 {
				t.Fatalf("query %d: %s scores %v, want %v", qi, h.ID, h.Score, fused[h.ID])
			}
			if i > 0 && (h.Score > got[i-1].Score || h.Score == got[i-1].Score && h.ID < got[i-1].ID) {
				t.Fatalf("query %d: hybrid hits out of order", qi)
			}
		}
		// Weighted fusion ranks the dense query's own child first when the
		// dense weight dominates.
		w, err := st.SearchHybrid(ctx, milvus.HybridRequest{Sparse: sq.Sparse, Dense: dq, TopK: 3, Fusion: milvus.Weighted, SparseWeight: 0.01, DenseWeight: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(w) == 0 || w[0].ID != recs[3].ID {
			t.Fatalf("query %d: weighted hybrid %+v", qi, w)
		}
	}
	sparseOnly := openStore(t, testConfig(srv))
	if _, err := sparseOnly.SearchHybrid(ctx, milvus.HybridRequest{Sparse: f.queries[0].Sparse, Dense: dq, TopK: 3}); !errors.Is(err, index.ErrInvalidInput) {
		t.Fatalf("hybrid search without a dense field: %v", err)
	}
}

func TestAuthAndDatabase(t *testing.T) {
	srv := milvustest.Start(t)
	srv.RequireAuth("parentrag", "s3cret")
	ctx := context.Background()
	cfg := testConfig(srv)
	cfg.Database = "corpora"
	cfg.Token = "parentrag:s3cret"
	st := openStore(t, cfg)
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if got := srv.CollectionsIn("corpora"); !slices.Equal(got, []string{st.Name()}) {
		t.Fatalf("collections of corpora: %v", got)
	}
	cfg2 := testConfig(srv)
	cfg2.Username, cfg2.Password = "parentrag", "s3cret"
	openStore(t, cfg2)
	cfg3 := testConfig(srv)
	cfg3.Username, cfg3.Password = "parentrag", "wrong"
	if _, err := milvus.Open(ctx, cfg3); err == nil || !strings.Contains(err.Error(), "auth") {
		t.Fatalf("open with a wrong password: %v", err)
	}
}

func TestOpenUnreachable(t *testing.T) {
	srv := milvustest.Start(t)
	cfg := testConfig(srv)
	srv.Stop()
	cfg.DialTimeout = 200 * time.Millisecond
	cfg.Retry = milvus.Retry{Attempts: 2, Backoff: time.Millisecond}
	start := time.Now()
	_, err := milvus.Open(context.Background(), cfg)
	if !errors.Is(err, milvus.ErrUnavailable) {
		t.Fatalf("open of a stopped server: %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("open took %v", el)
	}
}

func TestConfigValidation(t *testing.T) {
	ok := milvus.Config{Address: "localhost:19530", Collection: "c"}
	bad := map[string]func(*milvus.Config){
		"no address":      func(c *milvus.Config) { c.Address = "" },
		"bad collection":  func(c *milvus.Config) { c.Collection = "my-corpus" },
		"digit first":     func(c *milvus.Config) { c.Collection = "1abc" },
		"bad database":    func(c *milvus.Config) { c.Database = "a b" },
		"dense 1":         func(c *milvus.Config) { c.Dense = 1 },
		"dense too big":   func(c *milvus.Config) { c.Dense = milvus.MaxDense + 1 },
		"metric":          func(c *milvus.Config) { c.Metric = "HAMMING" },
		"index":           func(c *milvus.Config) { c.Index = "IVF_FLAT" },
		"hnsw m":          func(c *milvus.Config) { c.HNSWM = 1 },
		"shards":          func(c *milvus.Config) { c.Shards = 17 },
		"consistency":     func(c *milvus.Config) { c.Consistency = "Linearizable" },
		"negative batch":  func(c *milvus.Config) { c.InsertBatch = -1 },
		"negative hnswef": func(c *milvus.Config) { c.HNSWEf = -1 },
	}
	for name, mutate := range bad {
		cfg := ok
		mutate(&cfg)
		if _, err := milvus.Open(context.Background(), cfg); !errors.Is(err, milvus.ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestRecordValidation(t *testing.T) {
	srv := milvustest.Start(t)
	ctx := context.Background()
	cfg := testConfig(srv)
	cfg.Dense = 4
	st := openStore(t, cfg)
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	good := func() index.Record {
		return index.Record{ID: "c1", ParentID: "p1", DocID: "d1",
			Vector: vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{1}, Values: []float32{1}}, Dense: []float32{1, 2, 3, 4}}}
	}
	cases := map[string]func(*index.Record){
		"empty id": func(r *index.Record) { r.ID = "" },
		"long id":  func(r *index.Record) { r.ID = strings.Repeat("x", milvus.MaxIDLength+1) },
		"unsorted sparse": func(r *index.Record) {
			r.Vector.Sparse.Indices = []uint32{2, 1}
			r.Vector.Sparse.Values = []float32{1, 1}
		},
		"negative sparse": func(r *index.Record) { r.Vector.Sparse.Values = []float32{-1} },
		"nan dense":       func(r *index.Record) { r.Vector.Dense[0] = float32(math.NaN()) },
		"short dense":     func(r *index.Record) { r.Vector.Dense = r.Vector.Dense[:3] },
		"no dense":        func(r *index.Record) { r.Vector.Dense = nil },
	}
	for name, mutate := range cases {
		r := good()
		mutate(&r)
		err := st.Insert(ctx, []index.Record{good(), r}, nil)
		if !errors.Is(err, index.ErrInvalidInput) && !errors.Is(err, index.ErrDimensionMismatch) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := srv.RowCount(st.Name()); n != 0 {
		t.Fatalf("%d rows written by refused batches", n)
	}
	// A text over the limit is cut at a character boundary; a record
	// without a sparse vector is stored with an empty one.
	r := good()
	r.Text = strings.Repeat("é", milvus.MaxTextLength)
	r.Vector.Sparse = nil
	r.Metadata = map[string]string{"lang": "fr"}
	if err := st.Insert(ctx, []index.Record{r}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

func TestInFilter(t *testing.T) {
	if got := milvus.InFilter("doc_id", "a", `x"y`); got != `doc_id in ["a","x\"y"]` {
		t.Errorf("InFilter: %s", got)
	}
}

// TestTiesBeyondTheFirstFetch puts a run of equal scores across the cut:
// Milvus may return any of the tied children, so the store fetches more
// until the run ends and returns the smallest ids, as the embedded store.
func TestTiesBeyondTheFirstFetch(t *testing.T) {
	srv := milvustest.Start(t)
	ctx := context.Background()
	st := openStore(t, testConfig(srv))
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	ref, _ := embedded.New(embedded.Options{})
	r := rand.New(rand.NewPCG(3, 3))
	var recs []index.Record
	for _, i := range r.Perm(120) {
		rec := index.Record{
			ID:       fmt.Sprintf("c%03d", i),
			ParentID: fmt.Sprintf("p%03d", i/2),
			DocID:    "d",
			Ordinal:  i,
			Vector:   vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{7}, Values: []float32{1}}},
		}
		if i >= 100 { // a few better children
			rec.Vector.Sparse = &vector.Sparse{Indices: []uint32{7}, Values: []float32{2}}
		}
		recs = append(recs, rec)
	}
	if err := st.Insert(ctx, recs, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(ctx, len(recs)); err != nil {
		t.Fatal(err)
	}
	if err := ref.Upsert(ctx, recs); err != nil {
		t.Fatal(err)
	}
	q := vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{7}, Values: []float32{0.5}}}
	for _, k := range []int{5, 20, 25, 119, 120, 500} {
		before := srv.Calls("Search")
		want, _ := ref.Search(ctx, index.SearchRequest{Vector: q, TopK: k})
		got, err := st.Search(ctx, index.SearchRequest{Vector: q, TopK: k})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("k %d: got %v\nwant %v", k, got, want)
		}
		if k == 25 && srv.Calls("Search")-before < 2 {
			t.Fatalf("k %d: one search answered a tie across the cut", k)
		}
	}
	// Grouped: parents in order of their best child, ties by its id.
	got, err := st.SearchWith(ctx, index.SearchRequest{Vector: q, TopK: 15}, milvus.SearchOptions{GroupByParent: true})
	if err != nil {
		t.Fatal(err)
	}
	var parents []string
	for _, h := range got {
		parents = append(parents, h.ParentID)
	}
	want := []string{"p050", "p051", "p052", "p053", "p054", "p055", "p056", "p057", "p058", "p059", "p000", "p001", "p002", "p003", "p004"}
	if !slices.Equal(parents, want) {
		t.Fatalf("grouped parents %v, want %v", parents, want)
	}
}
