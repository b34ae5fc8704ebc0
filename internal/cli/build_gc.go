package cli

import (
	"os"
	"runtime/debug"
)

// buildGCPercent is the garbage collector's target of the commands that
// build a revision: the heap may grow by half of what is live, not by all
// of it. A build holds the documents' text and makes garbage a unit at a
// time; text is cheap to mark, so collecting twice as often keeps the
// collector at 1 to 3% of the build's CPU while the peak RSS of
// `local index` falls by about a quarter (docs/benchmarks.md).
const buildGCPercent = 50

// collectForBuild sets the collector's target for a build, unless GOGC
// in the environment chose one.
func collectForBuild() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(buildGCPercent)
	}
}
