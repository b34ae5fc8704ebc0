package build_test

import (
	"runtime/debug"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/build"
)

// gcPercent returns the collector's target, leaving it as it was.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestTuneCollectorSetsTheBuildTargetAndPutsItBack(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	restore := build.TuneCollector()
	if got := gcPercent(); got != build.GCPercent {
		t.Fatalf("target after TuneCollector = %d, want %d", got, build.GCPercent)
	}
	restore()
	if got := gcPercent(); got != 100 {
		t.Fatalf("target after restore = %d, want 100", got)
	}
}

func TestTuneCollectorLeavesATargetChosenInTheEnvironment(t *testing.T) {
	t.Setenv("GOGC", "200")
	defer debug.SetGCPercent(debug.SetGCPercent(200))
	build.TuneCollector()()
	if got := gcPercent(); got != 200 {
		t.Fatalf("target with GOGC=200 = %d, want 200 kept", got)
	}
}
