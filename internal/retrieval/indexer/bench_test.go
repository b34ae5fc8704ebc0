package indexer_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// englishLikeDocs returns n synthetic documents of 3 to 8 paragraphs over
// a 20k-word Zipf vocabulary, deterministically from seed.
func englishLikeDocs(n int, seed uint64) []hierarchy.Document {
	return synthtest.New(seed, 20000).Documents(n)
}

// defaultPolicyBuilder is the default policy's splitting: parents of 1500
// and children of 300 code points with an overlap of 30.
func defaultPolicyBuilder(tb testing.TB) *hierarchy.Builder {
	tb.Helper()
	parent, err := split.NewRecursive(split.DefaultOptions(1500, 0))
	if err != nil {
		tb.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(300, 30))
	if err != nil {
		tb.Fatal(err)
	}
	return &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "bench", Parent: parent, Child: child}
}

// BenchmarkIndex measures a whole in-memory build with the offline lexical
// embedder: split, fit, embed (with the default context weight) and upsert.
func BenchmarkIndex(b *testing.B) {
	for _, weight := range []float32{0, indexer.DefaultContextWeight} {
		b.Run(fmt.Sprintf("contextWeight=%g", weight), func(b *testing.B) {
			docs := englishLikeDocs(400, 11)
			size := 0
			for _, d := range docs {
				size += len(d.Text)
			}
			builder := defaultPolicyBuilder(b)
			ctx := context.Background()
			children := 0
			b.ReportAllocs()
			for b.Loop() {
				ix, err := indexer.Build(ctx, docs, builder, newLexical(b), indexer.Options{ContextWeight: weight})
				if err != nil {
					b.Fatal(err)
				}
				children += len(ix.Children)
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(children)/secs, "children/s")
			b.ReportMetric(float64(size)*float64(b.N)/secs/1e6, "MB/s")
			b.ReportMetric(float64(children)/float64(b.N), "children/op")
		})
	}
}

// BenchmarkUnits makes the units of 4 MB of the build benchmark's
// synthetic corpus with the default policy's splitting, split and
// analysed with contexts as the first pass of a build does, and reports
// MB/s of text.
func BenchmarkUnits(b *testing.B) {
	s := synthtest.New(21, 20000)
	var docs []hierarchy.Document
	size := 0
	for size < 4e6 {
		d := s.Document("doc", 3+len(docs)%6)
		docs, size = append(docs, d), size+len(d.Text)
	}
	builder := defaultPolicyBuilder(b)
	var scratch bm25.AnalysisScratch
	for b.Loop() {
		indexer.MakeUnits(docs, builder, &scratch)
	}
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
}

// BenchmarkGroupSegments measures cutting a corpus into runs and keying
// them: hashing every document's unit key, what a segments build pays
// for its whole corpus whatever the edit. It reports MB/s of text.
func BenchmarkGroupSegments(b *testing.B) {
	docs, size := synthtest.BenchDocuments(100e6)
	runs := 0
	for b.Loop() {
		runs = len(indexer.GroupSegments(docs, indexer.DefaultContextWeight, []byte("scope")))
	}
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(runs), "runs")
}

// BenchmarkBuildSegment builds one run of 8 MB of the build benchmark's
// synthetic corpus into a segment, with the default policy and context
// weight, as a segments build does for each run, and reports MB of text
// per second of wall time and per second of the process's CPU time (the
// measure that holds on a machine shared with other work).
func BenchmarkBuildSegment(b *testing.B) {
	docs, size := synthtest.BenchDocuments(8e6)
	builder := defaultPolicyBuilder(b)
	opts := indexer.SegmentOptions{ContextWeight: indexer.DefaultContextWeight}
	bytes := 0
	cpu := synthtest.ProcessCPUTime()
	for b.Loop() {
		seg, err := indexer.BuildSegment(context.Background(), docs, builder, opts)
		if err != nil {
			b.Fatal(err)
		}
		bytes = len(seg.Data)
	}
	cpu = synthtest.ProcessCPUTime() - cpu
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
	b.ReportMetric(float64(bytes)/float64(size), "segment-bytes/text-byte")
}
