package build

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target of a process that builds
// revisions: the heap may grow by half of what is live, not by all of it.
// A build holds the documents' text, which is most of what is live and
// never garbage, and makes garbage a unit at a time; at the default
// target the heap would grow by as much as the whole corpus before each
// collection. Text is cheap to mark, so collecting twice as often keeps
// the collector at 1 to 3% of the build's CPU while the peak RSS falls by
// about a quarter (docs/benchmarks.md).
const GCPercent = 50

// TuneCollector sets the process's collector target to GCPercent, unless
// GOGC in the environment chose one, and returns what puts the previous
// target back. The commands that build a revision call it first; a process
// that also serves queries, such as the operator, keeps its own.
func TuneCollector() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	previous := debug.SetGCPercent(GCPercent)
	return func() { debug.SetGCPercent(previous) }
}
