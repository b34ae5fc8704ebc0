package segment_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/index/segment"
	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// BenchmarkSegmentBuild compares, from the same analyses (synthetic
// corpora of 100k and 500k children, the default context weight), what
// a build pays for its child index today with what segments would cost:
// "weighted-file" fits the statistics, weighs every child with its
// context and streams it into the embedded store's file (the build's
// embed, store and finish stages without analysis); "segments" writes
// every segment file (about 64k children each) and opens them as a set
// (summing the statistics and computing every parent posting's bound);
// "one-edit" rewrites one segment and opens the set again, which is what
// an edit of one document would cost the child index. It reports the
// set's share of each run as set-ms. Run with -cpu 1 -benchtime 1x.
func BenchmarkSegmentBuild(b *testing.B) {
	for _, n := range []int{100_000, 500_000} {
		b.Run(fmt.Sprintf("children=%dk", n/1000), func(b *testing.B) {
			corpus, _ := synthAnalyses(b, n)
			weight := float32(indexer.DefaultContextWeight)
			cuts := segmentCuts(corpus, 65536)
			b.Run("weighted-file", func(b *testing.B) {
				for b.Loop() {
					writeWeightedFile(b, corpus, weight, b.TempDir())
				}
			})
			dir := b.TempDir()
			b.Run("segments", func(b *testing.B) {
				var setTime time.Duration
				for b.Loop() {
					paths := writeSegments(b, corpus, cuts, weight, dir, -1)
					setTime += openSet(b, paths, weight)
				}
				b.ReportMetric(float64(setTime.Milliseconds())/float64(b.N), "set-ms")
			})
			b.Run("one-edit", func(b *testing.B) {
				var setTime time.Duration
				for b.Loop() {
					paths := writeSegments(b, corpus, cuts, weight, dir, len(cuts)/2)
					setTime += openSet(b, paths, weight)
				}
				b.ReportMetric(float64(setTime.Milliseconds())/float64(b.N), "set-ms")
			})
		})
	}
}

// segmentCuts returns the parents at which segments of about size
// children start.
func segmentCuts(corpus []analysedParent, size int) []int {
	var cuts []int
	children := 0
	for p := range corpus {
		if children/size != (children+len(corpus[p].children))/size {
			cuts = append(cuts, p+1)
		}
		children += len(corpus[p].children)
	}
	return cuts
}

// writeWeightedFile fits the statistics of corpus and streams every child,
// weighed with its context, into the embedded store's file in dir.
func writeWeightedFile(tb testing.TB, corpus []analysedParent, weight float32, dir string) {
	stats := bm25.NewCorpusStats()
	children := 0
	for _, p := range corpus {
		for _, a := range p.children {
			stats.Count(a)
			children++
		}
	}
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		tb.Fatal(err)
	}
	if err := lex.FitCorpus(stats); err != nil {
		tb.Fatal(err)
	}
	w, err := embedded.NewFileWriter(dir, embedded.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	var scratch bm25.AnalysisScratch
	records := make([]index.Record, 0, 256)
	sums := make([]vector.Sparse, 0, 256)
	flush := func() {
		if err := w.Upsert(context.Background(), records); err != nil {
			tb.Fatal(err)
		}
		records, sums = records[:0], sums[:0]
	}
	for p := range corpus {
		ctxVec, err := lex.EmbedAnalysis(&corpus[p].context, &scratch)
		if err != nil {
			tb.Fatal(err)
		}
		for c := range corpus[p].children {
			own, err := lex.EmbedAnalysis(&corpus[p].children[c], &scratch)
			if err != nil {
				tb.Fatal(err)
			}
			sums = append(sums, vector.AppendScaled(vector.Sparse{}, *own, *ctxVec, weight))
			records = append(records, index.Record{ID: childID(p, c), ParentID: fmt.Sprint(p), DocID: "d", Vector: vector.Vector{Sparse: &sums[len(sums)-1]}})
			if len(records) == cap(records) {
				flush()
			}
		}
	}
	flush()
	if err := w.Finish(context.Background(), children); err != nil {
		tb.Fatal(err)
	}
}

// writeSegments writes the segments of corpus cut at cuts into dir and
// returns their paths: all of them, or only the only-th when only is not
// negative (the others are left as an earlier call wrote them).
func writeSegments(tb testing.TB, corpus []analysedParent, cuts []int, weight float32, dir string, only int) []string {
	var paths []string
	lo := 0
	for i, hi := range append(cuts, len(corpus)) {
		path := filepath.Join(dir, fmt.Sprintf("segment-%04d.prgs", i))
		paths = append(paths, path)
		if only < 0 || i == only {
			if err := os.WriteFile(path, segmentBytes(tb, corpus, lo, hi, weight), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		lo = hi
	}
	return paths
}

// openSet reads and opens the segments at paths as a set and returns how
// long that took.
func openSet(tb testing.TB, paths []string, weight float32) time.Duration {
	start := time.Now()
	segs := make([]*segment.Segment, len(paths))
	for i, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		if segs[i], err = segment.Open(data); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := segment.NewSet(segs, bm25.DefaultK1, bm25.DefaultB, weight); err != nil {
		tb.Fatal(err)
	}
	return time.Since(start)
}
