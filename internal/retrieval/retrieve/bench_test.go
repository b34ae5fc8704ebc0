package retrieve_test

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// benchChildrenPerDoc is how many children the default policy makes of a
// synthetic document on average (measured: 3917 children of 400
// documents); it sizes the corpora below.
const benchChildrenPerDoc = 9.8

// benchDocs returns about children/benchChildrenPerDoc synthetic documents
// shaped like BenchmarkIndex's: paragraphs of sentences whose words are
// Zipf-distributed (s = 1.07) over a 20k-word vocabulary.
func benchDocs(children int, seed uint64) ([]hierarchy.Document, *synthtest.Corpus) {
	gen := synthtest.New(seed, 20000)
	return gen.Documents(int(float64(children)/benchChildrenPerDoc + 0.5)), gen
}

// heapInuse returns the heap in use after a full collection.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// benchRetriever builds a retriever over about n children with the real
// pipeline (default policy splitters, lexical embedder, embedded store,
// parents in memory) and returns it with its child count, the heap it
// holds per child, and the build time.
func benchRetriever(b *testing.B, n int, weight float32) (*retrieve.Retriever, int, float64, time.Duration, *synthtest.Corpus) {
	b.Helper()
	before := heapInuse()
	start := time.Now()
	docs, gen := benchDocs(n, 5)
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		b.Fatal(err)
	}
	ix, err := indexer.Build(context.Background(), docs, newBuilder(b, 1500, 300, 30), lex, indexer.Options{ContextWeight: weight})
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	children := len(ix.Children)
	// Keep what serving needs: the embedder, the child store and the
	// parents; drop the documents and the child texts.
	r := &retrieve.Retriever{Embedder: ix.Embedder, Children: ix.Store.(index.Searcher), Parents: parentstore.NewMemory(ix.Parents)}
	ix = nil
	runtime.KeepAlive(docs)
	docs = nil
	perChild := float64(heapInuse()-before) / float64(children)
	return r, children, perChild, took, gen
}

// BenchmarkRetrieve measures end-to-end Retriever.Retrieve (embed the
// query, search children, group, over-fetch, fetch parents) with default
// options on synthetic corpora of 10k, 100k and 1M children indexed with
// the default context weight, one query per iteration. It reports p50 and
// p99 latency and the heap held per child (child index, lexical
// statistics and parents with their texts). The 1M corpus is built with
// the real pipeline too: about a minute on one core.
func BenchmarkRetrieve(b *testing.B) {
	sizes := []struct {
		name string
		n    int
	}{{"10k", 10_000}, {"100k", 100_000}, {"1M", 1_000_000}}
	for _, size := range sizes {
		b.Run("children="+size.name, func(b *testing.B) {
			r, children, perChild, took, gen := benchRetriever(b, size.n, indexer.DefaultContextWeight)
			queries := gen.Questions(1000)
			ctx := context.Background()
			lat := make([]time.Duration, 0, 1000)
			parents := 0
			i := 0
			for b.Loop() {
				start := time.Now()
				res, err := r.Retrieve(ctx, queries[i%len(queries)], retrieve.Options{})
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				parents += len(res)
				i++
			}
			slices.Sort(lat)
			ms := func(q float64) float64 {
				return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) / 1e6
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
			b.ReportMetric(perChild, "bytes/child")
			b.ReportMetric(float64(children), "children")
			b.ReportMetric(float64(parents)/float64(len(lat)), "parents/query")
			b.ReportMetric(took.Seconds(), "build-s")
		})
	}
}

// BenchmarkRetrieveNoContext is BenchmarkRetrieve at 100k children indexed
// without context vectors (ContextWeight 0): children hold only their own
// terms, so posting lists are shorter.
func BenchmarkRetrieveNoContext(b *testing.B) {
	r, children, perChild, took, gen := benchRetriever(b, 100_000, 0)
	reportLatencies(b, r, gen.Questions(1000))
	b.ReportMetric(perChild, "bytes/child")
	b.ReportMetric(float64(children), "children")
	b.ReportMetric(took.Seconds(), "build-s")
}

// reportLatencies retrieves with default options, one query per
// iteration in turn, and reports the p50 and p99 latency.
func reportLatencies(b *testing.B, r *retrieve.Retriever, queries []string) {
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
