package indexer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// TestSpillingBuildMatchesTheBuildInMemory checks that a build spilling
// its units between the passes, with and without a unit cache, indexes
// exactly what a build holding them does, hands over every parent in
// order, keeps none itself and leaves nothing in its spill directory.
func TestSpillingBuildMatchesTheBuildInMemory(t *testing.T) {
	docs := testDocs(80)
	cache, err := indexer.OpenUnitCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, weight := range []float32{0, 0.8} {
		held := build(t, docs, indexer.Options{Workers: 3, BatchSize: 7, ContextWeight: weight})
		for _, units := range []*indexer.UnitCache{nil, cache, cache} { // none, cold, warm
			spill := t.TempDir()
			var parents []hierarchy.Parent
			streamed := build(t, docs, indexer.Options{
				Workers: 3, BatchSize: 7, ContextWeight: weight, Units: units, UnitScope: []byte("scope"),
				SpillDir: spill, OnParent: func(p hierarchy.Parent) error { parents = append(parents, p); return nil },
			})
			if streamed.Parents != nil || streamed.Children != nil {
				t.Fatal("a spilling build kept its parents or children")
			}
			if streamed.ParentCount != len(held.Parents) || streamed.ChildCount != len(held.Children) {
				t.Errorf("counted %d parents and %d children, want %d and %d", streamed.ParentCount, streamed.ChildCount, len(held.Parents), len(held.Children))
			}
			if !reflect.DeepEqual(parents, held.Parents) {
				t.Errorf("weight %v: the parents handed over differ from the build's in memory", weight)
			}
			if !reflect.DeepEqual(searchAll(t, streamed), searchAll(t, held)) {
				t.Errorf("weight %v: search results differ from the build's in memory", weight)
			}
			if embeddedStats(streamed) != embeddedStats(held) {
				t.Errorf("weight %v: store stats %+v, in memory %+v", weight, embeddedStats(streamed), embeddedStats(held))
			}
			if entries, _ := os.ReadDir(spill); len(entries) != 0 {
				t.Errorf("the build left %d files in its spill directory", len(entries))
			}
		}
	}
}

// TestDamagedSpillFailsTheBuild checks that a unit damaged in the spill
// between the passes fails the build, naming the document, rather than
// indexing something else.
func TestDamagedSpillFailsTheBuild(t *testing.T) {
	docs := testDocs(20)
	spill := t.TempDir()
	damage := func(p indexer.Progress) {
		if p.Stage != indexer.StageFit {
			return
		}
		files, _ := filepath.Glob(filepath.Join(spill, "*"))
		if len(files) != 1 {
			t.Fatalf("spill directory holds %d files, want 1", len(files))
		}
		data, err := os.ReadFile(files[0])
		if err != nil || len(data) == 0 {
			t.Fatalf("reading the spill: %v (%d bytes)", err, len(data))
		}
		data[len("PRUPACK2")] ^= 0xff // the first unit written, after the magic
		if err := os.WriteFile(files[0], data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, err := indexer.Build(context.Background(), docs, testBuilder(t, 300, 60), newLexical(t), indexer.Options{SpillDir: spill, OnProgress: damage})
	if err == nil || !strings.Contains(err.Error(), "unit of document doc-0") || !strings.Contains(err.Error(), "damaged unit spill") {
		t.Fatalf("build over a damaged spill: %v, want an error naming the document", err)
	}
	if entries, _ := os.ReadDir(spill); len(entries) != 0 {
		t.Errorf("the failed build left %d files in its spill directory", len(entries))
	}
}

// TestBuildCancelledWhileSplittingStopsItsWorkers cancels builds in the
// middle of their first pass, spilling or not: each returns
// context.Canceled and leaves no worker behind, though workers wait to
// hand their units on while the build no longer takes them.
func TestBuildCancelledWhileSplittingStopsItsWorkers(t *testing.T) {
	docs := testDocs(300)
	before := runtime.NumGoroutine()
	for _, spill := range []string{"", t.TempDir()} {
		for range 5 {
			ctx, cancel := context.WithCancel(context.Background())
			opts := indexer.Options{Workers: 4, SpillDir: spill, OnProgress: func(p indexer.Progress) {
				if p.Stage == indexer.StageSplit && p.Done == 3 {
					cancel()
				}
			}}
			if spill != "" {
				opts.OnParent = func(hierarchy.Parent) error { return nil }
			}
			_, err := indexer.Build(ctx, docs, testBuilder(t, 300, 60), newLexical(t), opts)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("spill %q: %v, want context.Canceled", spill, err)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the cancelled builds, %d before", n, before)
	}
}
