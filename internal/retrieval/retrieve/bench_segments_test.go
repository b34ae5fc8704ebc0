package retrieve_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/segment"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// BenchmarkRetrieveSegments is BenchmarkRetrieve over a child index of
// segments (the runs of GroupSegments, each built by BuildSegment and
// opened from its bytes in memory) at 1M children: the same corpus,
// policy and queries, so the two compare within one run. The heap per
// child counts the segments' bytes, which a query pod maps instead.
func BenchmarkRetrieveSegments(b *testing.B) {
	before := heapInuse()
	start := time.Now()
	docs, gen := benchDocs(1_000_000, 5)
	var parents []hierarchy.Parent
	var segs []*segment.Segment
	for _, g := range indexer.GroupSegments(docs, indexer.DefaultContextWeight, []byte("bench")) {
		built, err := indexer.BuildSegment(context.Background(), g.Docs, newBuilder(b, 1500, 300, 30), indexer.SegmentOptions{
			ContextWeight: indexer.DefaultContextWeight,
			OnParent:      func(p hierarchy.Parent) error { parents = append(parents, p); return nil },
		})
		if err != nil {
			b.Fatal(err)
		}
		seg, err := segment.Open(built.Data)
		if err != nil {
			b.Fatal(err)
		}
		segs = append(segs, seg)
	}
	set, err := segment.NewSet(segs, bm25.DefaultK1, bm25.DefaultB, indexer.DefaultContextWeight)
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	r := &retrieve.Retriever{Embedder: set.Lexical(), Children: segment.NewStore(set, nil), Parents: parentstore.NewMemory(parents)}
	parents = nil
	runtime.KeepAlive(docs)
	docs = nil
	perChild := float64(heapInuse()-before) / float64(set.Children())
	reportLatencies(b, r, gen.Questions(1000))
	b.ReportMetric(perChild, "bytes/child")
	b.ReportMetric(float64(set.Children()), "children")
	b.ReportMetric(float64(len(segs)), "segments")
	b.ReportMetric(took.Seconds(), "build-s")
}
