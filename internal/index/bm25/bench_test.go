package bm25

import (
	"context"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// benchChildren are synthetic child chunks of about 60 words (~350 bytes),
// a typical small-to-big child size.
var benchChildren = syntheticTexts(20000, 60, 42)

func BenchmarkAnalyze(b *testing.B) {
	texts := benchChildren[:2000]
	size := 0
	for _, t := range texts {
		size += len(t)
	}
	b.SetBytes(int64(size))
	buf := make([]string, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range texts {
			buf = AppendAnalyzed(buf[:0], t)
		}
	}
}

func BenchmarkLexicalFit(b *testing.B) {
	l, _ := NewLexical(DefaultK1, DefaultB)
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Fit(benchChildren); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(benchChildren))*float64(b.N)/b.Elapsed().Seconds(), "children/s")
}

func BenchmarkLexicalEmbedDocuments(b *testing.B) {
	l := fitLexical(b, DefaultK1, DefaultB, benchChildren)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.EmbedDocuments(ctx, benchChildren); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(benchChildren))*float64(b.N)/b.Elapsed().Seconds(), "children/s")
}

func BenchmarkLexicalEmbedQuery(b *testing.B) {
	l := fitLexical(b, DefaultK1, DefaultB, benchChildren)
	queries := syntheticTexts(256, 8, 43)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := l.EmbedQuery(ctx, queries[i%len(queries)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkAnalyzeCounts analyses 4 MB of the build benchmark's synthetic
// corpus (a 20,000-word vocabulary) as child-sized texts of about 400
// bytes, counting each text's terms as a build does, and reports MB/s.
func BenchmarkAnalyzeCounts(b *testing.B) {
	s := synthtest.New(21, 20000)
	var texts []string
	size := 0
	for size < 4e6 {
		doc := s.Document("d", 4).Text
		size += len(doc)
		for len(doc) > 400 {
			texts, doc = append(texts, doc[:400]), doc[400:]
		}
		texts = append(texts, doc)
	}
	var scratch AnalysisScratch
	for b.Loop() {
		for _, t := range texts {
			scratch.AnalyzeCounts(t)
		}
	}
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
}
