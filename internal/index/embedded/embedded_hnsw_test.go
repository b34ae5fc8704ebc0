package embedded

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// TestHNSWRecall compares the HNSW index with exact flat search on
// clustered data: recall@10 must stay high, deleted records must never come
// back, and the graph must survive compaction and a save/load round trip.
func TestHNSWRecall(t *testing.T) {
	const n, dims, k = 3000, 24, 10
	for _, metric := range []index.Metric{index.Cosine, index.L2, index.IP} {
		t.Run(metric.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, uint64(metric)))
			centers := make([][]float32, 30)
			for i := range centers {
				centers[i] = randDense(r, dims, false)
			}
			point := func() []float32 {
				v := randDense(r, dims, false)
				c := centers[r.IntN(len(centers))]
				for i := range v {
					v[i] = c[i] + 0.3*v[i]
				}
				return v
			}
			opts := Options{Metric: metric, HNSW: true, HNSWThreshold: 1000}
			approx, exact := mustStore(t, opts), mustStore(t, Options{Metric: metric})
			for i := 0; i < n; i += 500 {
				batch := make([]index.Record, 500)
				for j := range batch {
					batch[j] = index.Record{ID: fmt.Sprintf("v%05d", i+j), Vector: vector.Vector{Dense: point()}}
				}
				mustUpsert(t, approx, batch...)
				mustUpsert(t, exact, batch...)
			}
			if !approx.Stats().HNSW || exact.Stats().HNSW {
				t.Fatal("HNSW should be active only on the enabled store")
			}
			var del []string
			for i := 0; i < n; i += 3 {
				del = append(del, fmt.Sprintf("v%05d", i))
			}
			for _, s := range []*Store{approx, exact} {
				if err := s.Delete(context.Background(), del); err != nil {
					t.Fatal(err)
				}
			}
			if st := approx.Stats(); st.Tombstones != 0 || !st.HNSW {
				t.Fatalf("deleting a third should compact and rebuild the graph: %+v", st)
			}
			reloaded := saveLoad(t, approx)
			for name, s := range map[string]*Store{"live": approx, "reloaded": reloaded} {
				if rc := recall(t, s, exact, point, k); rc < 0.9 {
					t.Fatalf("%s recall@%d = %.3f, want >= 0.9", name, k, rc)
				}
			}
		})
	}
}

func recall(t *testing.T, approx, exact *Store, point func() []float32, k int) float64 {
	found, total := 0, 0
	for range 100 {
		req := index.SearchRequest{Vector: vector.Vector{Dense: point()}, TopK: k}
		want := mustSearch(t, exact, req)
		got := mustSearch(t, approx, req)
		ids := map[string]bool{}
		for _, h := range got {
			ids[h.ID] = true
		}
		for _, h := range want {
			if ids[h.ID] {
				found++
			}
		}
		total += len(want)
		for _, h := range got {
			var i int
			fmt.Sscanf(h.ID, "v%d", &i)
			if i%3 == 0 {
				t.Fatalf("deleted record %s returned", h.ID)
			}
		}
	}
	return float64(found) / float64(total)
}
