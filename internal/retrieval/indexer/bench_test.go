package indexer_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// benchVocabulary returns n distinct pronounceable pseudo-words of two to
// four consonant-vowel syllables, the same on every call.
func benchVocabulary(n int) []string {
	const consonants, vowels = "bdfgklmnprstvz", "aeiou"
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteByte(consonants[r.IntN(len(consonants))])
			b.WriteByte(vowels[r.IntN(len(vowels))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// englishLikeDocs returns n documents of 3 to 8 paragraphs of 2 to 6
// sentences of 6 to 19 words, the words Zipf-distributed over a 20k-word
// vocabulary (s = 1.07), deterministically from seed.
func englishLikeDocs(n int, seed uint64) []hierarchy.Document {
	vocab := benchVocabulary(20000)
	r := rand.New(rand.NewPCG(seed, seed+1))
	z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	docs := make([]hierarchy.Document, n)
	var sb strings.Builder
	for i := range docs {
		sb.Reset()
		title := vocab[z.Uint64()] + " " + vocab[z.Uint64()]
		sb.WriteString("# " + title)
		for range 3 + r.IntN(6) {
			sb.WriteString("\n\n")
			for s := range 2 + r.IntN(5) {
				if s > 0 {
					sb.WriteByte(' ')
				}
				for w := range 6 + r.IntN(14) {
					if w > 0 {
						sb.WriteByte(' ')
					}
					sb.WriteString(vocab[z.Uint64()])
				}
				sb.WriteByte('.')
			}
		}
		docs[i] = hierarchy.Document{ID: fmt.Sprintf("doc-%06d", i), Title: title, Text: sb.String()}
	}
	return docs
}

// defaultPolicyBuilder is the default policy's splitting: parents of 1500
// and children of 300 code points with an overlap of 30.
func defaultPolicyBuilder(tb testing.TB) *hierarchy.Builder {
	tb.Helper()
	parent, err := split.NewRecursive(split.DefaultOptions(1500, 0))
	if err != nil {
		tb.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(300, 30))
	if err != nil {
		tb.Fatal(err)
	}
	return &hierarchy.Builder{Strategy: hierarchy.ParentChild, Revision: "bench", Parent: parent, Child: child}
}

// BenchmarkIndex measures a whole in-memory build with the offline lexical
// embedder: split, fit, embed (with the default context weight) and upsert.
func BenchmarkIndex(b *testing.B) {
	for _, weight := range []float32{0, indexer.DefaultContextWeight} {
		b.Run(fmt.Sprintf("contextWeight=%g", weight), func(b *testing.B) {
			docs := englishLikeDocs(400, 11)
			size := 0
			for _, d := range docs {
				size += len(d.Text)
			}
			builder := defaultPolicyBuilder(b)
			ctx := context.Background()
			children := 0
			b.ReportAllocs()
			for b.Loop() {
				ix, err := indexer.Build(ctx, docs, builder, newLexical(b), indexer.Options{ContextWeight: weight})
				if err != nil {
					b.Fatal(err)
				}
				children += len(ix.Children)
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(children)/secs, "children/s")
			b.ReportMetric(float64(size)*float64(b.N)/secs/1e6, "MB/s")
			b.ReportMetric(float64(children)/float64(b.N), "children/op")
		})
	}
}
