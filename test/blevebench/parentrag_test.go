package blevebench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// parentragSide builds the corpus into a bundle with the streaming
// builder, with plain BM25 (the lexical embedder at context weight 0,
// which is what bleve scores), and opens it as `parentrag serve` does: the
// child index memory-mapped, the parents read by offset. It puts the
// build and open times in seconds into got. The documents are dropped once built, so the
// process then holds what a query pod holds. It returns the bundle and its
// directory; the caller closes the bundle.
func parentragSide(b *testing.B, c corpus, log *phaseLog, got metrics) (bun *bundle.Bundle, dir string) {
	b.Helper()
	dir = filepath.Join(b.TempDir(), "bundle")
	buildBundle(b, c, dir, log)
	built := log.elapsed()
	bun, err := bundle.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	log.logf("opened the bundle")
	got.set(built.Seconds(), "parentrag-build-s")
	got.set((log.elapsed() - built).Seconds(), "parentrag-open-s")
	return bun, dir
}

// buildBundle runs the streaming build of the corpus's documents into dir,
// logging its progress.
func buildBundle(b *testing.B, c corpus, dir string, log *phaseLog) {
	b.Helper()
	cfg := bundle.Embedder{Kind: bundle.EmbedderLexical, K1: bm25.DefaultK1, B: bm25.DefaultB, ContextWeight: 0}
	e, err := build.NewEmbedder(cfg)
	if err != nil {
		b.Fatal(err)
	}
	docs := c.documents()
	log.logf("drew %d documents", len(docs))
	built, err := build.Run(context.Background(), build.Request{
		Docs: docs, Policy: build.Policy{Splitter: c.splitter, Revision: "bench"},
		Embedder: e, EmbedderConfig: cfg, Revision: "bench", Dir: dir,
		OnProgress: func(p indexer.Progress) { log.progress(progressUnit(p.Stage), p.Done, p.Total) },
	})
	if err != nil {
		b.Fatal(err)
	}
	log.logf("built %d children and %d parents", built.Manifest.Children, built.Manifest.Parents)
}

// progressUnit names what a build stage counts.
func progressUnit(stage string) string {
	if stage == indexer.StageSplit {
		return "split documents"
	}
	return fmt.Sprintf("%s children", stage)
}

// searchParentrag embeds q and searches the children, top 20.
func searchParentrag(r *retrieve.Retriever, q string) ([]index.Hit, error) {
	v, err := r.Embedder.EmbedQuery(context.Background(), q)
	if err != nil {
		return nil, err
	}
	return r.Children.Search(context.Background(), index.SearchRequest{Vector: v, TopK: retrieve.DefaultChildTopK})
}
