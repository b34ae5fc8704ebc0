package segment_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// benchChildrenPerDoc is how many children a synthetic document makes
// under the default policy, on average.
const benchChildrenPerDoc = 9.8

// synthAnalyses splits about n children's worth of synthetic documents
// with the default policy and returns their analyses: each parent's
// context as its document's title and its text, each child's text.
func synthAnalyses(tb testing.TB, n int) ([]analysedParent, *synthtest.Corpus) {
	tb.Helper()
	gen := synthtest.New(5, 20000)
	docs := gen.Documents(int(float64(n)/benchChildrenPerDoc + 0.5))
	b := bundletest.BuilderOf(tb, 1500, 300, 30)
	var scratch bm25.AnalysisScratch
	var out []analysedParent
	for _, doc := range docs {
		res := b.Build(doc)
		at := map[string]int{}
		for _, p := range res.Parents {
			at[p.ID] = len(out)
			out = append(out, analysedParent{context: scratch.AnalyzeCounts(doc.Title + "\n\n" + p.Text)})
		}
		for _, c := range res.Children {
			p := &out[at[c.ParentID]]
			p.children = append(p.children, scratch.AnalyzeCounts(c.Text))
		}
	}
	return out, gen
}

// BenchmarkSegmentSearch compares the pruned search of a segment set with
// that of the embedded store (block-max and grouped MaxScore over stored
// weights) on the same children and vectors: synthetic corpora of 100k
// and 1M children, the default context weight, the top 20 of 1,000
// questions, the set cut into segments of about 64k children. It reports
// p50 and p99 latency, the segments' bytes and what the set holds on the
// heap beside them, and the store's memory, per child.
// Run with -cpu 1.
func BenchmarkSegmentSearch(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"100k", 100_000}, {"1M", 1_000_000}} {
		b.Run("children="+size.name, func(b *testing.B) {
			corpus, gen := synthAnalyses(b, size.n)
			weight := float32(indexer.DefaultContextWeight)
			lex, store := indexedStore(b, corpus, weight)
			children := 0
			var cuts []int
			for p := range corpus {
				if children/65536 != (children+len(corpus[p].children))/65536 {
					cuts = append(cuts, p+1)
				}
				children += len(corpus[p].children)
			}
			set, setBytes := segmentSet(b, corpus, cuts, weight)
			corpus = nil
			queries := make([]vector.Vector, 0, 1000)
			for _, text := range gen.Questions(1000) {
				q, err := lex.EmbedQuery(context.Background(), text)
				if err != nil {
					b.Fatal(err)
				}
				queries = append(queries, q)
			}
			k := retrieve.DefaultChildTopK
			b.Run("embedded", func(b *testing.B) {
				timed(b, len(queries), func(i int) error {
					_, err := store.Search(context.Background(), index.SearchRequest{Vector: queries[i], TopK: k})
					return err
				})
				b.ReportMetric(store.Stats().BytesPerRecord(), "bytes/child")
			})
			b.Run("segments", func(b *testing.B) {
				timed(b, len(queries), func(i int) error {
					_, err := set.Search(context.Background(), queries[i].Sparse, k)
					return err
				})
				b.ReportMetric(float64(setBytes)/float64(children), "bytes/child")
				b.ReportMetric(float64(set.HeapBytes())/float64(children), "heap-bytes/child")
				b.ReportMetric(float64(len(set.Segments())), "segments")
			})
		})
	}
}

// timed runs query(i) once per iteration, i cycling through n questions,
// and reports the p50 and p99 latency.
func timed(b *testing.B, n int, query func(i int) error) {
	lat := make([]time.Duration, 0, b.N)
	i := 0
	for b.Loop() {
		start := time.Now()
		if err := query(i % n); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) / 1e6 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
