package indexer

import (
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// BenchmarkUnits makes the units of 4 MB of the build benchmark's
// synthetic corpus split as the default policy splits (parents of 1500
// and children of 300 code points, overlapping by 30) and analysed with
// contexts, as the first pass of a build does, and reports MB/s of text.
func BenchmarkUnits(b *testing.B) {
	parent, err := split.NewRecursive(split.DefaultOptions(1500, 0))
	if err != nil {
		b.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(300, 30))
	if err != nil {
		b.Fatal(err)
	}
	builder := &hierarchy.Builder{Strategy: hierarchy.ParentChild, Revision: "bench", Parent: parent, Child: child}
	s := synthtest.New(21, 20000)
	size := 0
	var docs []hierarchy.Document
	for size < 4e6 {
		d := s.Document("doc", 3+len(docs)%6)
		docs, size = append(docs, d), size+len(d.Text)
	}
	var scratch embed.AnalysisScratch
	for b.Loop() {
		for _, d := range docs {
			newUnit(d, builder, unitShape{analysed: true, contexts: true}, &scratch)
		}
	}
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
}
