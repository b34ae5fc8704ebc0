package split

import (
	"testing"
	"time"
	"unicode/utf8"
)

// benchPipeline splits every document into parents and each parent into
// children, as ParentDocumentRetriever does, and reports throughput in
// millions of document code points per second (each document counted once
// per iteration, though its text passes through two splitters).
func benchPipeline(b *testing.B, docs []string, parent interface{ Split(string) []Chunk }, child *Recursive) {
	b.Helper()
	chars, bytes := 0, 0
	for _, d := range docs {
		chars += utf8.RuneCountInString(d)
		bytes += len(d)
	}
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		for _, d := range docs {
			for _, p := range parent.Split(d) {
				_ = child.Split(p.Text)
			}
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(chars)*float64(b.N)/elapsed.Seconds()/1e6, "Mchars/s")
}

func benchDocs(b *testing.B) []string {
	var docs []string
	for _, d := range loadConformanceDocuments(b) {
		docs = append(docs, d.Text)
	}
	return docs
}

func presetSplitter(b *testing.B, preset string, size, overlap int, length LengthFunc) *Recursive {
	seps, isRegex, err := Separators(preset)
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewRecursive(Options{
		ChunkSize: size, ChunkOverlap: overlap, Separators: seps, IsSeparatorRegex: isRegex,
		KeepSeparator: KeepStart, StripWhitespace: true, Length: length,
	})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkSplitConformanceDocuments splits the 20 conformance documents
// into parents of 1500/0 and children of 300/30 code points.
func BenchmarkSplitConformanceDocuments(b *testing.B) {
	docs := benchDocs(b)
	for _, preset := range []string{PresetDefault, PresetMarkdown} {
		b.Run("preset="+preset, func(b *testing.B) {
			benchPipeline(b, docs, presetSplitter(b, preset, 1500, 0, nil), presetSplitter(b, preset, 300, 30, nil))
		})
	}
}

// BenchmarkSplitTokens splits the conformance documents into parents of
// 400/0 and children of 100/10 cl100k_base tokens.
func BenchmarkSplitTokens(b *testing.B) {
	docs := benchDocs(b)
	for _, enc := range []string{EncodingCl100kBase, EncodingO200kBase} {
		b.Run("encoding="+enc, func(b *testing.B) {
			length, err := TokenLength(enc)
			if err != nil {
				b.Fatal(err)
			}
			length("warm up the vocabulary")
			benchPipeline(b, docs, presetSplitter(b, PresetDefault, 400, 0, length), presetSplitter(b, PresetDefault, 100, 10, length))
		})
	}
}
