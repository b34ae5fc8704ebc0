package embed

import (
	"context"
	"testing"
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
