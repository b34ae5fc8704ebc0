package milvus_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/milvustest"
)

// benchChildren is the corpus size of the benchmarks.
const benchChildren = 10_000

var benchFixture *fixture

// benchCorpus builds about 10k children of synthetic documents (about 9.8
// children per document with the default policy).
func benchCorpus(b *testing.B) *fixture {
	b.Helper()
	if benchFixture == nil {
		f, err := buildFixture(benchChildren*10/98, 1000)
		if err != nil {
			b.Fatal(err)
		}
		benchFixture = f
	}
	return benchFixture
}

// BenchmarkMilvusInsert measures Insert (batches of 512 rows through the
// client to milvustest) of about 10k children, reported as children/s, and
// the Finish that follows (flush, index, load, count), as finish-ms.
func BenchmarkMilvusInsert(b *testing.B) {
	f := benchCorpus(b)
	srv := milvustest.Start(b)
	ctx := context.Background()
	b.ReportAllocs()
	var inserting, finishing time.Duration
	i := 0
	for b.Loop() {
		cfg := milvus.Config{Address: srv.Addr(), Collection: fmt.Sprintf("bench_insert_%d", i)}
		i++
		st, err := milvus.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Create(ctx); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := st.Insert(ctx, f.records, nil); err != nil {
			b.Fatal(err)
		}
		inserted := time.Now()
		if err := st.Finish(ctx, len(f.records)); err != nil {
			b.Fatal(err)
		}
		inserting += inserted.Sub(start)
		finishing += time.Since(inserted)
		b.StopTimer()
		_ = st.Drop(ctx)
		_ = st.Close(ctx)
		b.StartTimer()
	}
	b.ReportMetric(float64(len(f.records)*i)/inserting.Seconds(), "children/s")
	b.ReportMetric(float64(finishing.Milliseconds())/float64(i), "finish-ms")
	b.ReportMetric(float64(len(f.records)), "children")
}

// BenchmarkMilvusSearch measures Store.Search (top 10, sparse BM25
// queries) through the client against milvustest holding about 10k
// children, and the embedded store on the same records for comparison;
// it reports p50 and p99 latency.
func BenchmarkMilvusSearch(b *testing.B) {
	f := benchCorpus(b)
	srv := milvustest.Start(b)
	ctx := context.Background()
	st, err := milvus.Open(ctx, milvus.Config{Address: srv.Addr(), Collection: "bench_search"})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close(ctx)
	if err := st.Create(ctx); err != nil {
		b.Fatal(err)
	}
	if err := st.Insert(ctx, f.records, nil); err != nil {
		b.Fatal(err)
	}
	if err := st.Finish(ctx, len(f.records)); err != nil {
		b.Fatal(err)
	}
	for _, store := range []struct {
		name string
		vs   index.Searcher
	}{{"milvus", st}, {"embedded", f.ref}} {
		b.Run(store.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, 1000)
			i := 0
			for b.Loop() {
				start := time.Now()
				if _, err := store.vs.Search(ctx, index.SearchRequest{Vector: f.queries[i%len(f.queries)], TopK: 10}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				i++
			}
			slices.Sort(lat)
			ms := func(q float64) float64 { return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) / 1e6 }
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
			b.ReportMetric(float64(len(f.records)), "children")
		})
	}
}
