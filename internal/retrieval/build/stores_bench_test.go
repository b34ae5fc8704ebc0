package build_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/policy/policytest"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// storeBenchSizes are the corpus sizes of BenchmarkRetrieveByStore, in
// children: $PARENTRAG_STORE_BENCH_SIZES (such as 100000,1000000), or 10k.
func storeBenchSizes(b *testing.B) []int {
	env := os.Getenv("PARENTRAG_STORE_BENCH_SIZES")
	if env == "" {
		return []int{10_000}
	}
	var out []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 {
			b.Fatalf("PARENTRAG_STORE_BENCH_SIZES: %q is not a number of children", f)
		}
		out = append(out, n)
	}
	return out
}

// heapNow is the heap in use after a full collection, in bytes.
func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkRetrieveByStore builds one synthetic corpus (Zipf words, about
// 9.8 children per document, the default policy, BM25 with context) into
// each child index with build.Run (the embedded store, segments, Milvus
// through the wire-compatible test server in this process, Postgres
// through PGlite or $PARENTRAG_POSTGRES_DSN), opens each bundle as a
// query pod does, and measures Retrieve with the default options (3
// parents), one question per iteration: p50 and p99 latency, the build's
// time, and what opening the bundle added to the heap (what a query pod
// holds for its child index and parent store, files mapped aside). Sizes
// come from PARENTRAG_STORE_BENCH_SIZES, and PARENTRAG_STORE_BENCH_STORES
// (such as embedded,segments) keeps some stores only.
func BenchmarkRetrieveByStore(b *testing.B) {
	for _, n := range storeBenchSizes(b) {
		gen := synthtest.New(5, 20000)
		docs := gen.Documents(int(float64(n)/9.8 + 0.5))
		queries := gen.Questions(1000)
		builds, open := stores(b)
		for _, sb := range builds {
			if only := os.Getenv("PARENTRAG_STORE_BENCH_STORES"); only != "" && !slices.Contains(strings.Split(only, ","), sb.name) {
				continue
			}
			b.Run("children="+strconv.Itoa(n)+"/store="+sb.name, func(b *testing.B) {
				req := policytest.LexicalRequest(b, docs, sb.ref, filepath.Join(b.TempDir(), sb.name))
				if sb.prepare != nil {
					sb.prepare(&req)
				}
				start := time.Now()
				built, err := build.Run(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				took := time.Since(start)
				heap0 := heapNow()
				bd, err := bundle.OpenWith(context.Background(), req.Dir, open)
				if err != nil {
					b.Fatal(err)
				}
				defer bd.Close()
				heap1 := heapNow()
				reportRetrieve(b, bd.Retriever, queries)
				b.ReportMetric(float64(built.Manifest.Children), "children")
				b.ReportMetric(took.Seconds(), "build-s")
				b.ReportMetric(float64(int64(heap1)-int64(heap0))/(1<<20), "open-heap-MiB")
			})
		}
	}
}

// reportRetrieve retrieves with default options, one question per
// iteration in turn, and reports the p50 and p99 latency.
func reportRetrieve(b *testing.B, r *retrieve.Retriever, queries []string) {
	b.Helper()
	lat := make([]time.Duration, 0, 1000)
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, err := r.Retrieve(context.Background(), queries[i%len(queries)], retrieve.Options{}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)])/1e6, "p99-ms")
}
