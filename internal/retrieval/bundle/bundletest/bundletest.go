// Package bundletest builds small real indexes and revision bundles for
// tests: the default-shaped splitters at a small scale, the lexical
// embedder, and a bundle saved in a temporary directory.
package bundletest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// PolicyRevision is the policy revision of every builder made here.
const PolicyRevision = "policy-rev"

// Builder returns a ParentChild builder with parents of 200 and children of
// 60 code points overlapping by 10: small enough that a few short
// documents make several parents.
func Builder(tb testing.TB) *hierarchy.Builder {
	tb.Helper()
	return BuilderOf(tb, 200, 60, 10)
}

// BuilderOf returns a ParentChild builder with parents of parentSize and
// children of childSize code points overlapping by overlap.
func BuilderOf(tb testing.TB, parentSize, childSize, overlap int) *hierarchy.Builder {
	tb.Helper()
	parent, err := split.NewRecursive(split.DefaultOptions(parentSize, 0))
	if err != nil {
		tb.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(childSize, overlap))
	if err != nil {
		tb.Fatal(err)
	}
	return &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: PolicyRevision, Parent: parent, Child: child}
}

// Build indexes docs in memory with the lexical embedder and Builder.
func Build(tb testing.TB, docs []hierarchy.Document) *indexer.Index {
	tb.Helper()
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		tb.Fatal(err)
	}
	ix, err := indexer.Build(context.Background(), docs, Builder(tb), lex, indexer.Options{Workers: 2})
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

// Manifest is the manifest Save writes for docs at revision rev.
func Manifest(docs []hierarchy.Document, rev string) bundle.Manifest {
	return bundle.Manifest{
		Revision:       rev,
		PolicyRevision: PolicyRevision,
		Policy:         json.RawMessage(`{"strategy":"ParentChild"}`),
		LengthUnit:     "Characters",
		SourceDigest:   bundle.SourceDigest(docs),
		Embedder:       bundle.Embedder{Kind: bundle.EmbedderLexical, K1: bm25.DefaultK1, B: bm25.DefaultB},
		CreatedAt:      time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

// Save indexes docs and saves them as a bundle of revision rev in a new
// temporary directory, whose path it returns.
func Save(tb testing.TB, docs []hierarchy.Document, rev string) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "bundle")
	SaveIndex(tb, dir, Build(tb, docs), Manifest(docs, rev))
	return dir
}

// SaveIndex writes ix as a bundle with manifest m into dir, which must not
// exist, as a build commits one.
func SaveIndex(tb testing.TB, dir string, ix *indexer.Index, m bundle.Manifest) {
	tb.Helper()
	p, err := bundle.Begin(dir, false)
	if err == nil {
		_, err = p.Commit(ix, m)
	}
	if err != nil {
		tb.Fatalf("saving the bundle: %v", err)
	}
}

// RunEndingID returns the first id "<prefix><n>", n = 0, 1, ..., after
// which a build into segments ends a run of documents: a test puts one
// after every few documents to cut a small corpus into several segments.
func RunEndingID(prefix string) string {
	for n := 0; ; n++ {
		id := prefix + strconv.Itoa(n)
		pair := []hierarchy.Document{{ID: id, Text: "a"}, {ID: "next", Text: "b"}}
		if len(indexer.GroupSegments(pair, 0, nil)) == 2 {
			return id
		}
	}
}

// Handbook is a page of two sections: both paragraphs of the first are
// about hotel rooms, and one sentence of the second mentions a hotel.
// With policytest.LevelsPolicy and the query "hotel room", the adaptive
// mode returns the first section whole and the sentence of the second in a
// window.
func Handbook() hierarchy.Document {
	return hierarchy.Document{ID: "handbook.md", Title: "Travel handbook", Text: "# Travel handbook\n\n## Hotels\n\n" +
		"A hotel room may cost up to 180 euros a night in a capital. Hotel rooms elsewhere cost up to 120 euros.\n\n" +
		"Book every hotel room through the travel desk. A hotel room booked elsewhere is paid back only with a reason.\n\n" +
		"## Meals\n\nMeals are paid as a daily allowance of 40 euros. Breakfast at the hotel is not paid twice. Keep no receipts."}
}
