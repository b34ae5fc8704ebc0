package build_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/policy/policytest"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// benchCorpus returns synthetic documents of about mb megabytes of text
// (PARENTRAG_BENCH_MB, default 4) and their size in bytes.
func benchCorpus(b *testing.B) ([]hierarchy.Document, int) {
	return synthtest.BenchDocumentsOfEnv(b, 4)
}

// stageClock times the stages of a build from its progress reports: each
// stage runs from the previous stage's last report to its own.
type stageClock struct {
	last, lastReport time.Time
	stage            string
	spent            map[string]time.Duration
}

// report is a progress callback.
func (c *stageClock) report(p indexer.Progress) {
	now := time.Now()
	if p.Stage != c.stage && c.stage != "" {
		c.last = c.lastReport
	}
	c.spent[p.Stage] = now.Sub(c.last)
	c.stage = p.Stage
	c.lastReport = now
}

// timedBuild builds docs into a new directory with the unit cache in
// cacheDir ("" for none) and returns the time of each stage (units, fit,
// embed, finish, save) and how many documents were reused. Removing the
// bundle after is not timed.
func timedBuild(b *testing.B, docs []hierarchy.Document, cacheDir string, store bundle.VectorStoreRef) (map[string]time.Duration, int) {
	clock := &stageClock{last: time.Now(), spent: map[string]time.Duration{}}
	dir := filepath.Join(b.TempDir(), "bundle")
	req := policytest.LexicalRequest(b, docs, store, dir)
	req.OnProgress, req.SaveProgress, req.UnitCacheDir = clock.report, indexer.Progress{Stage: "save"}, cacheDir
	built, err := build.Run(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	clock.report(indexer.Progress{Stage: "end"})
	// The save report comes once the child index is finished: what was
	// timed as save so far is finishing it, and save itself ends at end.
	clock.spent[stageFinish], clock.spent["save"] = clock.spent["save"], clock.spent["end"]
	b.StopTimer()
	os.RemoveAll(dir)
	b.StartTimer()
	return clock.spent, built.Reused
}

// stageFinish names the time between the last embedding report and the
// save report: finishing the child store (for the bundle's file writer,
// merging the posting runs into the child index file).
const stageFinish = "finish"

// BenchmarkRevision measures whole builds (split, analyse, fit, embed,
// store, save) of a synthetic corpus: from scratch without unit cache,
// from scratch filling an empty one, and after editing one document with
// a warm one, each into the embedded store and (under segments/) into
// segments. It reports MB of corpus text per second of wall time and of
// the process's CPU time (the second holds on a machine shared with other
// work, and counts the removal of each bundle, which is not timed), and
// the milliseconds of each stage: units (split and analyse, or look up
// and load), fit (corpus statistics), embed (weights and store), finish
// (the child index file from the posting runs) and save. It makes the
// corpus and builds with the collector target of the commands that build
// (TuneCollector).
func BenchmarkRevision(b *testing.B) {
	defer build.TuneCollector()()
	docs, size := benchCorpus(b)
	type benchCase struct {
		name  string
		store bundle.VectorStoreRef
		prep  func(b *testing.B) (cache string, edit func(i int))
	}
	var cases []benchCase
	for _, store := range []bundle.VectorStoreRef{{}, segments} {
		prefix := ""
		if store.Kind != "" {
			prefix = store.Kind + "/"
		}
		cases = append(cases,
			benchCase{prefix + "full", store, func(*testing.B) (string, func(int)) { return "", func(int) {} }},
			benchCase{prefix + "full-filling-cache", store, func(*testing.B) (string, func(int)) { return "", nil }}, // a new cache per iteration, below
			benchCase{prefix + "one-edit-warm-cache", store, func(b *testing.B) (string, func(int)) {
				cache := b.TempDir()
				timedBuild(b, docs, cache, store)
				return cache, func(i int) { docs[i%len(docs)].Text += " An edit." }
			}})
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cache, edit := tc.prep(b)
			total := map[string]time.Duration{}
			reused := 0
			i := 0
			cpu := synthtest.ProcessCPUTime()
			for b.Loop() {
				dir := cache
				if edit == nil {
					b.StopTimer()
					dir = filepath.Join(b.TempDir(), "units")
					b.StartTimer()
				} else {
					edit(i)
				}
				spent, r := timedBuild(b, docs, dir, tc.store)
				for k, v := range spent {
					total[k] += v
				}
				reused += r
				i++
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(size)*float64(b.N)/secs/1e6, "MB/s")
			b.ReportMetric(float64(size)*float64(b.N)/(synthtest.ProcessCPUTime()-cpu).Seconds()/1e6, "MB/cpu-s")
			b.ReportMetric(float64(reused)/float64(b.N), "reused/op")
			for _, stage := range []string{indexer.StageSplit, indexer.StageFit, indexer.StageEmbed, stageFinish, "save"} {
				b.ReportMetric(float64(total[stage].Milliseconds())/float64(b.N), stage+"-ms/op")
			}
		})
	}
}
