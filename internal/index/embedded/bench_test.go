package embedded

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// The synthetic corpus: term ids follow a Zipf law over a 50k vocabulary,
// P(k) ∝ (zipfV+k)^-zipfS. The offset flattens the head the way stopword
// removal does (the most frequent term lands in ~38% of children, the 100th
// in ~4%). Each child draws tokens until it has 30 distinct terms; its
// weights are BM25's saturated term frequency (k1 1.2, b 0.75), the query
// side carries idf × count, as the lexical embedder does. Queries draw 3-8
// distinct terms from the same law.
const (
	benchVocab    = 50000
	zipfS, zipfV  = 1.07, 10
	termsPerChild = 30
	benchQueries  = 2000
)

type zipfGen struct {
	r    *rand.Rand
	z    *rand.Zipf
	seen []uint32
	tf   []int
}

func newZipfGen(seed uint64) *zipfGen {
	r := rand.New(rand.NewPCG(seed, 0xc0ffee))
	return &zipfGen{r: r, z: rand.NewZipf(r, zipfS, zipfV, benchVocab-1)}
}

// draw collects distinct Zipf terms with their counts until it has n.
func (g *zipfGen) draw(n int) (terms []uint32, tf []int, tokens int) {
	g.seen, g.tf = g.seen[:0], g.tf[:0]
	for len(g.seen) < n {
		t := uint32(g.z.Uint64())
		tokens++
		if i := slices.Index(g.seen, t); i >= 0 {
			g.tf[i]++
			continue
		}
		g.seen = append(g.seen, t)
		g.tf = append(g.tf, 1)
	}
	return g.seen, g.tf, tokens
}

func (g *zipfGen) child() *vector.Sparse {
	const k1, b, avgdl = 1.2, 0.75, 31.0
	terms, tf, dl := g.draw(termsPerChild)
	return sortedSparse(terms, func(i int) float32 {
		f := float64(tf[i])
		return float32(f * (k1 + 1) / (f + k1*(1-b+b*float64(dl)/avgdl)))
	})
}

func (g *zipfGen) query(idf []float64) *vector.Sparse {
	terms, tf, _ := g.draw(3 + g.r.IntN(6))
	return sortedSparse(terms, func(i int) float32 { return float32(idf[terms[i]] * float64(tf[i])) })
}

func sortedSparse(terms []uint32, weight func(i int) float32) *vector.Sparse {
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(terms[a]) - int(terms[b]) })
	s := &vector.Sparse{Indices: make([]uint32, len(terms)), Values: make([]float32, len(terms))}
	for j, i := range order {
		s.Indices[j], s.Values[j] = terms[i], weight(i)
	}
	return s
}

// zipfIDF approximates Lucene's idf from the expected document frequency of
// each term under the corpus law.
func zipfIDF(n int) []float64 {
	p := make([]float64, benchVocab)
	sum := 0.0
	for k := range p {
		p[k] = math.Pow(zipfV+float64(k), -zipfS)
		sum += p[k]
	}
	idf := make([]float64, benchVocab)
	for k := range p {
		df := float64(n) * (1 - math.Pow(1-p[k]/sum, 31))
		idf[k] = math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	}
	return idf
}

// childRecord names children doc-D/p-P/c-C, five children per parent and
// twenty parents per document.
func childRecord(i int, v vector.Vector) index.Record {
	doc, parent := fmt.Sprintf("doc-%d", i/100), fmt.Sprintf("doc-%d/p-%d", i/100, i/5%20)
	return index.Record{ID: fmt.Sprintf("%s/c-%d", parent, i%5), ParentID: parent, DocID: doc, Ordinal: i % 5, Vector: v}
}

type benchCorpus struct {
	n            int
	store        *Store
	queries      []index.SearchRequest
	bytesPerRec  float64
	buildSeconds float64
}

var lastCorpus *benchCorpus // the most recent corpus, reused across benchmarks

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func sparseCorpus(b *testing.B, n int) *benchCorpus {
	if lastCorpus != nil && lastCorpus.n == n {
		return lastCorpus
	}
	lastCorpus = nil
	before := heapInUse()
	start := time.Now()
	e := mustStore(b, Options{})
	g := newZipfGen(uint64(n))
	_ = synthBatches(g, n, 0, func(recs []index.Record) error {
		mustUpsert(b, e, recs...)
		return nil
	})
	c := &benchCorpus{n: n, store: e, buildSeconds: time.Since(start).Seconds()}
	c.bytesPerRec = float64(heapInUse()-before) / float64(n)
	idf := zipfIDF(n)
	for range benchQueries {
		c.queries = append(c.queries, index.SearchRequest{Vector: vector.Vector{Sparse: g.query(idf)}, TopK: 10})
	}
	lastCorpus = c
	return c
}

func sizeLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// BenchmarkSparseSearch measures top-10 BM25-style search over one store
// exhaustively, pruned by windowed MaxScore alone, and pruned by default
// (grouped search where it pays); run with -cpu 1. PARENTRAG_BENCH_10M=1
// adds a 10M-child corpus (about 4 GB of heap and a few minutes to build).
func BenchmarkSparseSearch(b *testing.B) {
	sizes := []int{10_000, 100_000, 1_000_000}
	if os.Getenv("PARENTRAG_BENCH_10M") == "1" {
		sizes = append(sizes, 10_000_000)
	}
	for _, n := range sizes {
		b.Run("children="+sizeLabel(n), func(b *testing.B) {
			c := sparseCorpus(b, n)
			b.Logf("built %d children in %.1fs, %.0f bytes/child (Stats estimate %.0f), RSS %.0f MiB",
				n, c.buildSeconds, c.bytesPerRec, c.store.Stats().BytesPerRecord(), rssMiB())
			for _, mode := range []string{"exhaustive", "windowed", "pruned"} {
				b.Run(mode, func(b *testing.B) {
					c.store.SetExhaustiveSparse(mode == "exhaustive")
					c.store.SetWindowedSparse(mode == "windowed")
					defer c.store.SetExhaustiveSparse(false)
					defer c.store.SetWindowedSparse(false)
					searchLoop(b, c.store, c.queries, c.bytesPerRec)
				})
			}
		})
	}
}

// rssMiB returns the process's resident set size in MiB, 0 where
// /proc/self/statm cannot be read.
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0
	}
	return float64(resident*int64(os.Getpagesize())) / (1 << 20)
}

// searchLoop runs the queries round robin, timing each, and reports latency
// percentiles (wall clock, and CPU time of the benchmark's thread),
// throughput, memory per child and postings looked at per query.
func searchLoop(b *testing.B, e *Store, queries []index.SearchRequest, bytesPerRec float64) {
	ctx := context.Background()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lat := make([]time.Duration, 0, 1<<16)
	cpu := make([]time.Duration, 0, 1<<16)
	_, before := e.SparseWork()
	i := 0
	for b.Loop() {
		start, startCPU := time.Now(), synthtest.ThreadCPUTime()
		if _, err := e.Search(ctx, queries[i%len(queries)]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		cpu = append(cpu, synthtest.ThreadCPUTime()-startCPU)
		i++
	}
	slices.Sort(cpu)
	b.ReportMetric(float64(cpu[len(cpu)/2])/1e6, "p50-cpu-ms")
	b.ReportMetric(float64(cpu[(len(cpu)-1)*99/100])/1e6, "p99-cpu-ms")
	slices.Sort(lat)
	var total time.Duration
	for _, d := range lat {
		total += d
	}
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
	b.ReportMetric(float64(len(lat))/total.Seconds(), "queries/s")
	b.ReportMetric(bytesPerRec, "bytes/child")
	_, after := e.SparseWork()
	b.ReportMetric(float64(after-before)/float64(len(lat)), "postings/query")
}

// BenchmarkUpsert streams batches of 1000 sparse children into one store.
// Ids cycle through 200k, so once the store is full every upsert replaces a
// record and compaction runs periodically.
func BenchmarkUpsert(b *testing.B) {
	const pool, batch = 200_000, 1000
	g := newZipfGen(1)
	vecs := make([]*vector.Sparse, 20_000)
	for i := range vecs {
		vecs[i] = g.child()
	}
	recs := make([]index.Record, pool)
	for i := range recs {
		recs[i] = childRecord(i, vector.Vector{Sparse: vecs[i%len(vecs)]})
	}
	e := mustStore(b, Options{})
	ctx := context.Background()
	off := 0
	for b.Loop() {
		if err := e.Upsert(ctx, recs[off:off+batch]); err != nil {
			b.Fatal(err)
		}
		off = (off + batch) % pool
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "children/s")
}

// BenchmarkDenseFlatSearch measures exact top-10 cosine search over 384-dim
// vectors.
func BenchmarkDenseFlatSearch(b *testing.B) {
	const dims = 384
	for _, n := range []int{10_000, 100_000} {
		b.Run("children="+sizeLabel(n), func(b *testing.B) {
			lastCorpus = nil
			r := rand.New(rand.NewPCG(uint64(n), 384))
			before := heapInUse()
			e := mustStore(b, Options{Metric: index.Cosine})
			for i := 0; i < n; i += 10000 {
				recs := make([]index.Record, min(10000, n-i))
				for j := range recs {
					recs[j] = childRecord(i+j, vector.Vector{Dense: randDense(r, dims, false)})
				}
				mustUpsert(b, e, recs...)
			}
			perRec := float64(heapInUse()-before) / float64(n)
			queries := make([]index.SearchRequest, 200)
			for i := range queries {
				queries[i] = index.SearchRequest{Vector: vector.Vector{Dense: randDense(r, dims, false)}, TopK: 10}
			}
			searchLoop(b, e, queries, perRec)
		})
	}
}

// BenchmarkLoad measures Load on the 1M-children sparse corpus and
// reports the loaded store's memory, whose postings are packed exactly.
func BenchmarkLoad(b *testing.B) {
	c := sparseCorpus(b, 1_000_000)
	dir := b.TempDir()
	start := time.Now()
	if err := c.store.Save(dir); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, File))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("saved %d children (%d MB) in %.2fs", c.n, st.Size()>>20, time.Since(start).Seconds())
	before := heapInUse()
	loaded, err := Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	perRec := float64(heapInUse()-before) / float64(c.n)
	runtime.KeepAlive(loaded)
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(perRec, "bytes/child")
	b.ReportMetric(float64(st.Size())/float64(c.n), "file-bytes/child")
}

// BenchmarkDenseHNSWSearch measures the approximate index on 30k 384-dim
// clustered vectors (above the default threshold) and reports recall@10
// against exact flat search. Building the graph dominates its run time.
func BenchmarkDenseHNSWSearch(b *testing.B) {
	const n, dims = 30_000, 384
	lastCorpus = nil
	r := rand.New(rand.NewPCG(30, 384))
	centers := make([][]float32, 100)
	for i := range centers {
		centers[i] = randDense(r, dims, false)
	}
	point := func() []float32 {
		v := randDense(r, dims, false)
		c := centers[r.IntN(len(centers))]
		for i := range v {
			v[i] = c[i] + 0.5*v[i]
		}
		return v
	}
	recs := make([]index.Record, n)
	for i := range recs {
		recs[i] = childRecord(i, vector.Vector{Dense: point()})
	}
	exact := mustStore(b, Options{Metric: index.Cosine})
	mustUpsert(b, exact, recs...)
	before := heapInUse()
	start := time.Now()
	approx := mustStore(b, Options{Metric: index.Cosine, HNSW: true})
	mustUpsert(b, approx, recs...)
	b.Logf("built HNSW over %d vectors in %.1fs", n, time.Since(start).Seconds())
	perRec := float64(heapInUse()-before) / n
	runtime.KeepAlive(recs) // the records were live at both measurements
	queries := make([]index.SearchRequest, 200)
	found := 0
	for i := range queries {
		queries[i] = index.SearchRequest{Vector: vector.Vector{Dense: point()}, TopK: 10}
		got := map[string]bool{}
		for _, h := range mustSearch(b, approx, queries[i]) {
			got[h.ID] = true
		}
		for _, h := range mustSearch(b, exact, queries[i]) {
			if got[h.ID] {
				found++
			}
		}
	}
	searchLoop(b, approx, queries, perRec)
	b.ReportMetric(float64(found)/float64(10*len(queries)), "recall@10")
}
