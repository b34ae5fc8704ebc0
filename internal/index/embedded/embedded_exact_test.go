package embedded

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// TestEmbeddedExactVsBruteForce applies random upserts, replacements and
// deletes (enough to trigger compactions) and checks after every step that
// sparse and dense searches equal a brute-force scan exactly: same records,
// same order, bitwise-equal scores.
func TestEmbeddedExactVsBruteForce(t *testing.T) {
	for _, tc := range []struct {
		metric index.Metric
		coarse bool
	}{{index.IP, false}, {index.IP, true}, {index.Cosine, false}, {index.L2, false}, {index.L2, true}} {
		t.Run(fmt.Sprintf("%v/coarse=%v", tc.metric, tc.coarse), func(t *testing.T) {
			checkExact(t, tc.metric, tc.coarse, 0)
		})
	}
}

// TestEmbeddedExactAcrossSaveLoad reloads the store from disk mid-run; the
// loaded store must keep answering exactly.
func TestEmbeddedExactAcrossSaveLoad(t *testing.T) {
	checkExact(t, index.Cosine, true, 7)
}

func checkExact(t *testing.T, metric index.Metric, coarse bool, reloadEvery int) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(uint64(metric)+1, 42))
	const dims = 6
	e := mustStore(t, Options{Metric: metric})
	ref := model{}
	compactions := 0
	for step := range 60 {
		batch := make([]index.Record, r.IntN(30))
		for i := range batch {
			batch[i] = randRecord(r, fmt.Sprintf("id%03d", r.IntN(150)), dims, coarse)
		}
		before := e.Stats().Tombstones
		mustUpsert(t, e, batch...)
		if e.Stats().Tombstones < before {
			compactions++
		}
		ref.upsert(batch)
		var del []string
		for range r.IntN(20) {
			del = append(del, fmt.Sprintf("id%03d", r.IntN(150)))
		}
		before = e.Stats().Tombstones
		if err := e.Delete(ctx, del); err != nil {
			t.Fatal(err)
		}
		if e.Stats().Tombstones < before {
			compactions++
		}
		for _, id := range del {
			delete(ref, id)
		}
		if reloadEvery > 0 && step%reloadEvery == 0 {
			e = saveLoad(t, e)
		}
		if n, _ := e.Count(ctx); n != len(ref) {
			t.Fatalf("step %d: count %d, want %d", step, n, len(ref))
		}
		for q := range 20 {
			k := 1 + r.IntN(12)
			if q%5 == 0 {
				k = 1000
			}
			var req index.SearchRequest
			if q%2 == 0 {
				req = index.SearchRequest{Vector: vector.Vector{Sparse: randSparse(r, 45, 6, coarse)}, TopK: k}
			} else {
				req = index.SearchRequest{Vector: vector.Vector{Dense: randDense(r, dims, coarse)}, TopK: k}
			}
			got := mustSearch(t, e, req)
			sameHits(t, fmt.Sprintf("step %d query %d", step, q), got, ref.search(req, metric))
		}
	}
	if compactions == 0 {
		t.Fatal("the run never compacted; grow the delete rate")
	}
}

// TestSparseScoresEqualDot checks bitwise equality with vector.Sparse.Dot
// on long vectors with wide-ranging weights, where any change in summation
// order would show up as rounding differences.
func TestSparseScoresEqualDot(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	e := mustStore(t, Options{})
	ref := model{}
	for i := range 500 {
		s := randSparse(r, 300, 120, false)
		for j := range s.Values {
			s.Values[j] *= float32(math.Pow(10, float64(r.IntN(7)-3)))
		}
		rc := index.Record{ID: fmt.Sprintf("r%d", i), Vector: vector.Vector{Sparse: s}}
		mustUpsert(t, e, rc)
		ref.upsert([]index.Record{rc})
	}
	for q := range 50 {
		req := index.SearchRequest{Vector: vector.Vector{Sparse: randSparse(r, 300, 40, false)}, TopK: 600}
		sameHits(t, fmt.Sprintf("query %d", q), mustSearch(t, e, req), ref.search(req, index.IP))
	}
}

// TestDenseKernels checks the four-lane kernels against float64 sums.
func TestDenseKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 3, 4, 7, 64, 384, 385} {
		a, b := randDense(r, n, false), randDense(r, n, false)
		var d, l float64
		for i := range a {
			d += float64(a[i]) * float64(b[i])
			l += float64(a[i]-b[i]) * float64(a[i]-b[i])
		}
		if got := dot(a, b); math.Abs(float64(got)-d) > 1e-4*math.Max(1, math.Abs(d)) {
			t.Fatalf("dot n=%d: %v, want %v", n, got, d)
		}
		if got := l2(a, b); math.Abs(float64(got)-math.Sqrt(l)) > 1e-4*math.Max(1, math.Sqrt(l)) {
			t.Fatalf("l2 n=%d: %v, want %v", n, got, math.Sqrt(l))
		}
	}
}
