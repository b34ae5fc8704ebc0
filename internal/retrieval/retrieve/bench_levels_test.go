package retrieve_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/eval"
	"github.com/parentrag/parentrag/internal/eval/evaltest"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// levelShapes are the shapes BenchmarkLevels compares, by name.
var levelShapes = []struct {
	name   string
	levels []v1alpha1.Level
}{
	{"2-parent-child", nil},
	{"3-section-parent-child", []v1alpha1.Level{v1alpha1.LevelSection, v1alpha1.LevelParent, v1alpha1.LevelChild}},
	{"3-section-parent-sentence", []v1alpha1.Level{v1alpha1.LevelSection, v1alpha1.LevelParent, v1alpha1.LevelSentence}},
	{"5-all", []v1alpha1.Level{v1alpha1.LevelDocument, v1alpha1.LevelSection, v1alpha1.LevelParent, v1alpha1.LevelChild, v1alpha1.LevelSentence}},
}

// BenchmarkLevels builds the SQuAD v1.1 dev articles into a bundle of each
// shape of levelShapes (the default sizes, the lexical embedder with its
// default context weight, the embedded child index, parents in the files
// store) and times Retrieve over its questions, one per iteration, in
// both modes, with the default options. It reports the bundle's size on
// disk, the units its parent store holds and the children it indexes.
func BenchmarkLevels(b *testing.B) {
	corpus, questions, err := evaltest.LoadSet(sharedtest.Dir(b, "eval", "squad-v1.1-dev"), "articles.jsonl.gz")
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range levelShapes {
		bu := levelsBundle(b, corpus, shape.levels)
		for _, mode := range []retrieve.Mode{retrieve.ModeParents, retrieve.ModeAdaptive} {
			b.Run(shape.name+"/"+strings.ToLower(string(mode)), func(b *testing.B) {
				opts := retrieve.Options{Mode: mode}
				ctx := context.Background()
				b.ResetTimer()
				for i := range b.N {
					if _, err := bu.Retriever.Retrieve(ctx, questions[i%len(questions)].Text, opts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(bu.Manifest.Bytes)/(1<<20), "MiB")
				b.ReportMetric(float64(bu.Manifest.Parents), "units")
				b.ReportMetric(float64(bu.Manifest.Children), "children")
			})
		}
	}
}

// levelsBundle builds the corpus into a bundle of the given levels (nil:
// the default two) in a temporary directory and opens it.
func levelsBundle(b *testing.B, corpus *eval.Corpus, levels []v1alpha1.Level) *bundle.Bundle {
	b.Helper()
	compiled, err := policy.Compile(&v1alpha1.ChunkingPolicySpec{Levels: levels})
	if err != nil {
		b.Fatal(err)
	}
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		b.Fatal(err)
	}
	ix, err := indexer.Build(context.Background(), corpus.Docs, compiled.Builder, lex, indexer.Options{ContextWeight: indexer.DefaultContextWeight})
	if err != nil {
		b.Fatal(err)
	}
	m := bundletest.Manifest(corpus.Docs, "bench")
	m.Embedder.ContextWeight = indexer.DefaultContextWeight
	m.Policy = compiled.Manifested().Spec
	dir := filepath.Join(b.TempDir(), "bundle")
	bundletest.SaveIndex(b, dir, ix, m)
	bu, err := bundle.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bu.Close() })
	return bu
}
