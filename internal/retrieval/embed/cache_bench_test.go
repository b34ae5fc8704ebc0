package embed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// The benchmark cache: 100k children of a 384-dimension model (bge-small,
// all-MiniLM), about 158 MB of log, looked up in indexer-sized batches.
const (
	benchCacheEntries = 100_000
	benchCacheDims    = 384
	benchCacheBatch   = 256
)

var benchCacheKey = CacheKey{Model: "bench-embed", Dimensions: benchCacheDims}

// benchCacheText is the text of benchmark child i.
func benchCacheText(i int) string { return fmt.Sprintf("benchmark child %d", i) }

// fillBenchCache stores benchCacheEntries vectors in a new FileCache in
// dir, in Puts of 1000, closes it and returns their keys in log order.
func fillBenchCache(b *testing.B, dir string) [][32]byte {
	b.Helper()
	c, err := OpenFileCache(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	keys := make([][32]byte, benchCacheEntries)
	base := realVector("bench", benchCacheDims)
	for lo := 0; lo < benchCacheEntries; lo += 1000 {
		vecs := make([]vector.Vector, 1000)
		for i := range vecs {
			keys[lo+i] = benchCacheKey.Sum(benchCacheText(lo + i))
			vecs[i] = vector.Vector{Dense: slices.Clone(base)}
			vecs[i].Dense[0] = float32(lo + i)
		}
		if err := c.Put(keys[lo:lo+1000], vecs); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}

// BenchmarkFileCacheOpen measures opening a 100k-entry cache (reading and
// checking every record) and the heap its index keeps per entry.
func BenchmarkFileCacheOpen(b *testing.B) {
	dir := b.TempDir()
	fillBenchCache(b, dir)
	perEntry := indexBytesPerEntry(b, dir)
	for b.Loop() {
		c, err := OpenFileCache(dir)
		if err != nil {
			b.Fatal(err)
		}
		_ = c.Close()
	}
	b.ReportMetric(float64(benchCacheEntries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(perEntry, "index-B/entry")
}

// indexBytesPerEntry is the live heap an open cache of dir holds, divided
// by its entries.
func indexBytesPerEntry(b *testing.B, dir string) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := OpenFileCache(dir)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := c.Len()
	_ = c.Close()
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// BenchmarkFileCacheGet measures lookups of 256 cached vectors from a
// 100k-entry cache: scattered keys, and keys in the order they were stored
// (a new revision's unchanged children), which Get reads in large spans.
func BenchmarkFileCacheGet(b *testing.B) {
	dir := b.TempDir()
	keys := fillBenchCache(b, dir)
	c, err := OpenFileCache(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for _, order := range []string{"random", "log-order"} {
		b.Run(order, func(b *testing.B) {
			batch := make([][32]byte, benchCacheBatch)
			b.ReportAllocs()
			for b.Loop() {
				lo := r.IntN(benchCacheEntries - benchCacheBatch)
				for i := range batch {
					if order == "random" {
						batch[i] = keys[r.IntN(benchCacheEntries)]
					} else {
						batch[i] = keys[lo+i]
					}
				}
				if _, found, err := c.Get(batch); err != nil || !found[0] {
					b.Fatalf("get: %v", err)
				}
			}
			reportLookups(b)
		})
	}
}

// BenchmarkCachedAllHits measures a Cached EmbedDocuments of 256 children
// that are all in a 100k-entry file cache: hashing, lookup and decoding.
func BenchmarkCachedAllHits(b *testing.B) {
	dir := b.TempDir()
	fillBenchCache(b, dir)
	store, err := OpenFileCache(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	c := NewCached(failingEmbedder{}, store, benchCacheKey)
	texts := make([]string, benchCacheBatch)
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		lo := r.IntN(benchCacheEntries - benchCacheBatch)
		for i := range texts {
			texts[i] = benchCacheText(lo + i)
		}
		if _, err := c.EmbedDocuments(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	reportLookups(b)
}

// reportLookups reports the rate of looked-up vectors and the time per
// vector.
func reportLookups(b *testing.B) {
	n := float64(benchCacheBatch) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "lookups/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/lookup")
}

// failingEmbedder fails every call: a benchmark of hits must not reach it.
type failingEmbedder struct{}

func (failingEmbedder) EmbedDocuments(context.Context, []string) ([]vector.Vector, error) {
	return nil, errors.New("a cache hit reached the embedder")
}

func (failingEmbedder) EmbedQuery(context.Context, string) (vector.Vector, error) {
	return vector.Vector{}, errors.New("a cache hit reached the embedder")
}
