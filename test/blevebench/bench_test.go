// Package blevebench measures parentrag's exact BM25 child search side by
// side with bleve's BM25 search over the same children, in one run. It is
// a module of its own so that bleve never enters parentrag's dependencies;
// run it with `make bench-bleve`.
package blevebench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// BenchmarkSideBySide indexes the same synthetic children (the default
// policy's split of Zipf-distributed English-like documents) in
// parentrag's child index, with plain BM25 (context weight 0), built by
// the streaming builder and opened memory-mapped as a query pod serves it,
// and in a bleve scorch index merged to one segment, with bleve's BM25 and
// the same k1 and b, then answers the same 4 to 8 word questions with
// both, one after the other for each question, top 20. It reports each
// engine's p50 and p99 wall time and process CPU time per question and
// the ratios of bleve's to parentrag's; each engine's build time, size on
// disk and the resident memory it adds to the process once built (all,
// anonymous, file pages). Neither side keeps the documents or children
// once it has indexed them, so only the two indexes stay in memory. Sizes
// come from PARENTRAG_BLEVE_SIZES (children, comma separated; default
// 100000). Run with -cpu 1.
func BenchmarkSideBySide(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("children=%d", n), func(b *testing.B) {
			c := newCorpus(b, n)
			got, start := metrics{}, readMemory(b)
			ours, oursDir := parentragSide(b, c, newPhaseLog(fmt.Sprintf("children=%d parentrag", n)), got)
			defer ours.Close()
			loaded := readMemory(b)
			loaded.record(got, "parentrag", start)
			theirs, theirsDir := bleveSide(b, c, newPhaseLog(fmt.Sprintf("children=%d bleve", n)), got)
			defer theirs.Close()
			readMemory(b).record(got, "bleve", loaded)
			log := newPhaseLog(fmt.Sprintf("children=%d questions", n))
			sideBySide(b, ours.Retriever, theirs, c.questions(1000), log)
			log.logf("answered %d questions", b.N)
			recordFiles(b, got, oursDir, theirsDir)
			got.set(float64(ours.Manifest.Children), "children")
			got.report(b)
		})
	}
}

// recordFiles puts into got, in MiB, the size on disk of the bundle, of
// its child index and of the bleve index, and how much of each engine's
// mapped files its searches brought into memory. It runs after the
// questions, once bleve has removed the segments its merge replaced.
func recordFiles(b *testing.B, got metrics, bundleDir, bleveDir string) {
	got.set(diskMiB(b, bundleDir), "parentrag-disk-MiB")
	got.set(diskMiB(b, filepath.Join(bundleDir, bundle.ChildrenDir)), "parentrag-index-MiB")
	got.set(diskMiB(b, bleveDir), "bleve-disk-MiB")
	got.set(mappedMiB(b, bundleDir), "parentrag-mapped-after-MiB")
	got.set(mappedMiB(b, bleveDir), "bleve-mapped-after-MiB")
}

// benchSizes reads PARENTRAG_BLEVE_SIZES.
func benchSizes(b *testing.B) []int {
	spec := os.Getenv("PARENTRAG_BLEVE_SIZES")
	if spec == "" {
		spec = "100000"
	}
	var sizes []int
	for _, f := range strings.Split(spec, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil || n <= 0 {
			b.Fatalf("PARENTRAG_BLEVE_SIZES: %q is not a positive number of children", f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// sideBySide answers question i with parentrag (embed the question,
// search the children) and then with bleve, once per iteration, and
// reports both engines' latencies, their ratios, and the share of bleve's
// hits parentrag found too (top20-shared), which shows both answer the
// same question.
func sideBySide(b *testing.B, r *retrieve.Retriever, idx bleve.Index, questions []string, log *phaseLog) {
	var ours, theirs timings
	var shared, found int
	i := 0
	for b.Loop() {
		q := questions[i%len(questions)]
		var mine []index.Hit
		var others *bleve.SearchResult
		ours.time(b, func() (err error) {
			mine, err = searchParentrag(r, q)
			return err
		})
		theirs.time(b, func() (err error) {
			others, err = searchBleve(idx, q)
			return err
		})
		shared, found = shared+overlap(mine, others), found+len(others.Hits)
		if i++; i%100 == 0 {
			log.logf("answered %d questions", i)
		}
	}
	if found == 0 {
		b.Fatal("bleve found nothing for any question")
	}
	b.ReportMetric(float64(shared)/float64(found), "top20-shared")
	ours.report(b, "parentrag")
	theirs.report(b, "bleve")
	b.ReportMetric(theirs.wallQuantile(0.50)/ours.wallQuantile(0.50), "p50-ratio")
	b.ReportMetric(theirs.wallQuantile(0.99)/ours.wallQuantile(0.99), "p99-ratio")
	b.ReportMetric(quantile(theirs.cpu, 0.50)/quantile(ours.cpu, 0.50), "p50-cpu-ratio")
	b.ReportMetric(quantile(theirs.cpu, 0.99)/quantile(ours.cpu, 0.99), "p99-cpu-ratio")
}

// overlap counts bleve's hits that parentrag found too: the analysers
// differ (Porter against Porter2 stems, other stop words), so the lists
// agree mostly, not exactly.
func overlap(mine []index.Hit, others *bleve.SearchResult) int {
	ids := make(map[string]bool, len(mine))
	for _, h := range mine {
		ids[h.ID] = true
	}
	n := 0
	for _, h := range others.Hits {
		if ids[h.ID] {
			n++
		}
	}
	return n
}

// timings collects one engine's per-question wall and process CPU times.
type timings struct{ wall, cpu []time.Duration }

// time runs one question and records how long it took.
func (t *timings) time(b *testing.B, question func() error) {
	start, startCPU := time.Now(), synthtest.ProcessCPUTime()
	if err := question(); err != nil {
		b.Fatal(err)
	}
	t.wall = append(t.wall, time.Since(start))
	t.cpu = append(t.cpu, synthtest.ProcessCPUTime()-startCPU)
}

// wallQuantile returns the q-quantile of the wall times, in milliseconds.
func (t *timings) wallQuantile(q float64) float64 { return quantile(t.wall, q) }

// report reports the engine's p50 and p99 wall and CPU times.
func (t *timings) report(b *testing.B, engine string) {
	b.ReportMetric(quantile(t.wall, 0.50), engine+"-p50-ms")
	b.ReportMetric(quantile(t.wall, 0.99), engine+"-p99-ms")
	b.ReportMetric(quantile(t.cpu, 0.50), engine+"-p50-cpu-ms")
	b.ReportMetric(quantile(t.cpu, 0.99), engine+"-p99-cpu-ms")
}

// quantile returns the q-quantile of d in milliseconds.
func quantile(d []time.Duration, q float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))]) / 1e6
}
