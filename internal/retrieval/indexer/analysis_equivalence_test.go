package indexer_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/eval/evaltest"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// hashDense is a deterministic dense embedder: each text's vector comes
// from its SHA-256, so equal texts get equal vectors.
type hashDense struct{}

// EmbedDocuments returns one 8-dimensional vector per text.
func (hashDense) EmbedDocuments(_ context.Context, texts []string) ([]vector.Vector, error) {
	out := make([]vector.Vector, len(texts))
	for i, text := range texts {
		sum := sha256.Sum256([]byte(text))
		out[i].Dense = make([]float32, 8)
		for j := range out[i].Dense {
			out[i].Dense[j] = float32(binary.LittleEndian.Uint32(sum[4*j:])) / math.MaxUint32
		}
	}
	return out, nil
}

// EmbedQuery embeds the query as a document.
func (h hashDense) EmbedQuery(ctx context.Context, text string) (vector.Vector, error) {
	v, err := h.EmbedDocuments(ctx, []string{text})
	return v[0], err
}

// embedders are fresh embedders of each kind the indexer treats apart.
func embedders(t *testing.T) map[string]func() embed.Embedder {
	lexical := func() *bm25.Lexical {
		l, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	return map[string]func() embed.Embedder{
		"lexical": func() embed.Embedder { return lexical() },
		"hybrid":  func() embed.Embedder { return &embed.Hybrid{Lexical: lexical(), Dense: hashDense{}} },
		"dense":   func() embed.Embedder { return hashDense{} },
	}
}

// checkSameAsReference builds docs with Build and with the reference path
// and fails unless records and lexical statistics are identical.
func checkSameAsReference(t *testing.T, docs []hierarchy.Document, b hierarchy.DocumentSplitter, weights []float32, kinds ...string) {
	for _, kind := range kinds {
		newEmbedder := embedders(t)[kind]
		for _, w := range weights {
			t.Run(fmt.Sprintf("%s/contextWeight=%g", kind, w), func(t *testing.T) {
				ref := newEmbedder()
				want := indexer.ReferenceRecords(t, docs, b, ref, w)
				store := &indexer.RecordingStore{}
				got := newEmbedder()
				if _, err := indexer.Build(context.Background(), docs, b, got, indexer.Options{Store: store, ContextWeight: w, BatchSize: 100}); err != nil {
					t.Fatal(err)
				}
				if len(store.Records) != len(want) {
					t.Fatalf("%d records, want %d", len(store.Records), len(want))
				}
				for i := range want {
					if !reflect.DeepEqual(store.Records[i], want[i]) {
						t.Fatalf("record %d (%s) differs from the reference:\n got %+v\nwant %+v", i, want[i].ID, store.Records[i], want[i])
					}
				}
				if lex := embed.LexicalPart(ref); lex != nil {
					a, _ := lex.MarshalStats()
					b, _ := embed.LexicalPart(got).MarshalStats()
					if string(a) != string(b) {
						t.Error("lexical statistics differ from the reference")
					}
				}
			})
		}
	}
}

// TestAnalysedOnceIsTheReferenceOnSquad checks, on the SQuAD v1.1 dev
// articles split by the default policy, that analysing each text once
// gives bit for bit the vectors and statistics of analysing it for Fit,
// for EmbedDocuments and for each context.
func TestAnalysedOnceIsTheReferenceOnSquad(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes SQuAD four times; skipped with -short")
	}
	corpus, _, err := evaltest.LoadSet(sharedtest.Dir(t, "eval", "squad-v1.1-dev"), "articles.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := policy.Compile(&policy.Default().Spec)
	if err != nil {
		t.Fatal(err)
	}
	checkSameAsReference(t, corpus.Docs, compiled.Builder, []float32{0, indexer.DefaultContextWeight}, "lexical")
	checkSameAsReference(t, corpus.Docs[:5], compiled.Builder, []float32{indexer.DefaultContextWeight}, "hybrid")
}

// TestAnalysedOnceIsTheReferenceWithSections checks the same on synthetic
// Markdown documents split at sections, whose children carry headings and
// whose contexts carry heading paths and opening sections, for every kind
// of embedder.
func TestAnalysedOnceIsTheReferenceWithSections(t *testing.T) {
	docs := synthtest.New(5, 3000).Documents(60)
	for i := range docs {
		docs[i].Text = strings.Replace(docs[i].Text, "\n\n", "\n\n## Part one\n\n", 2)
		if i%3 == 0 {
			docs[i].Metadata = map[string]string{"lang": "en"}
		}
	}
	within, err := split.NewRecursive(split.DefaultOptions(600, 0))
	if err != nil {
		t.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(150, 15))
	if err != nil {
		t.Fatal(err)
	}
	b := &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "r", Child: child, Parent: split.NewSectioner(split.SectionOptions{
		Headers: split.NewMarkdownHeaderSplitter(split.MarkdownHeaderOptions{Headers: split.MarkdownHeadings()}),
		Within:  within, ChunkSize: 600,
	})}
	checkSameAsReference(t, docs, b, []float32{0, 0.5}, "lexical", "hybrid", "dense")
}

// TestChildrenAreCountedFromTheirParentsTokens checks, on SQuAD and on
// synthetic documents split by the default policy, that children are
// counted from their parent's tokens, not analysed again, and that every
// analysis is that of its text alone.
func TestChildrenAreCountedFromTheirParentsTokens(t *testing.T) {
	compiled, err := policy.Compile(&policy.Default().Spec)
	if err != nil {
		t.Fatal(err)
	}
	corpus, _, err := evaltest.LoadSet(sharedtest.Dir(t, "eval", "squad-v1.1-dev"), "articles.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	for name, docs := range map[string][]hierarchy.Document{"squad": corpus.Docs, "synthetic": synthtest.New(9, 4000).Documents(80)} {
		children, alone := indexer.AnalyseAll(t, docs, compiled.Builder)
		t.Logf("%s: %d children, %d analysed alone", name, children, alone)
		if children == 0 || alone*100 > children {
			t.Errorf("%s: %d of %d children analysed alone, want under 1%%", name, alone, children)
		}
	}
}
