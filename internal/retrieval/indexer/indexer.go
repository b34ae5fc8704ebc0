// Package indexer builds an index from documents: split into parents and
// children, fit and embed the children, and fill the child store. It runs
// in memory; the bundle package persists what it builds.
package indexer

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/parentrag/parentrag/internal/retrieval"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/vectorstore"
)

// Stages reported through Progress, in order.
const (
	StageSplit = "split"
	StageFit   = "fit"
	StageEmbed = "embed"
)

// DefaultContextWeight is the context weight of the lexical embedder: on
// SQuAD v1.1 it lifts answer-in-context at every budget (docs/evaluation.md).
const DefaultContextWeight = 0.8

// Progress reports how far a build is: Done of Total units of Stage
// (documents while splitting, children while embedding).
type Progress struct {
	Stage string
	Done  int
	Total int
}

// Options tune Build.
type Options struct {
	// Workers split documents concurrently (default GOMAXPROCS).
	Workers int
	// BatchSize is how many children are embedded per call (default 256).
	BatchSize int
	// OnProgress, when set, is called after each step, from one goroutine.
	OnProgress func(Progress)
	// Store receives the children; a new embedded store when nil. An
	// external store (Milvus) must exist and be empty.
	Store vectorstore.VectorStore
	// ContextWeight, when above zero, adds each child's context (its
	// document's title and its parent's text) to the child's vector with
	// this weight, so a child is scored as itself plus ContextWeight times
	// its context. Only children are indexed either way.
	ContextWeight float32
}

// Index is a built index held in memory.
type Index struct {
	Documents int
	Parents   []hierarchy.Parent
	Children  []hierarchy.Child
	Embedder  embed.Embedder
	// Store holds the children: the embedded store, or Options.Store.
	Store vectorstore.VectorStore
	// Windows is true when the parents are sentence windows, which
	// overlap: its Retriever merges overlapping hits.
	Windows bool
}

// Build splits, embeds and indexes docs. Parents and children come out in
// document order whatever the concurrency, so the same input always yields
// the same index. An Embedder that is a Fitter is fitted on every child text
// before any is embedded.
func Build(ctx context.Context, docs []hierarchy.Document, b hierarchy.DocumentSplitter, e embed.Embedder, opts Options) (*Index, error) {
	opts = opts.withDefaults()
	results, err := splitAll(ctx, docs, b, opts)
	if err != nil {
		return nil, err
	}
	ix := &Index{Documents: len(docs), Embedder: e, Windows: isWindows(b)}
	for _, r := range results {
		ix.Parents = append(ix.Parents, r.Parents...)
		ix.Children = append(ix.Children, r.Children...)
	}
	if err := ix.embedAll(ctx, docs, opts); err != nil {
		return nil, err
	}
	return ix, nil
}

// withDefaults fills zero options.
func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 256
	}
	if o.OnProgress == nil {
		o.OnProgress = func(Progress) {}
	}
	return o
}

// splitAll splits every document with a bounded pool of workers and
// returns the results in document order.
func splitAll(ctx context.Context, docs []hierarchy.Document, b hierarchy.DocumentSplitter, opts Options) ([]hierarchy.Result, error) {
	results := make([]hierarchy.Result, len(docs))
	next := make(chan int)
	done := make(chan struct{}, len(docs))
	var wg sync.WaitGroup
	for range min(opts.Workers, max(len(docs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = b.Build(docs[i])
				done <- struct{}{}
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range docs {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for n := range docs {
		select {
		case <-done:
			opts.OnProgress(Progress{Stage: StageSplit, Done: n + 1, Total: len(docs)})
		case <-ctx.Done():
			wg.Wait()
			return nil, ctx.Err()
		}
	}
	wg.Wait()
	return results, nil
}

// embedAll fits the embedder when it learns corpus statistics, then embeds
// children in batches into a new embedded store. It checks ctx before
// fitting and before each batch, so a cancelled build never reports
// success, even when there is nothing to embed or the embedder ignores ctx.
func (ix *Index) embedAll(ctx context.Context, docs []hierarchy.Document, opts Options) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	texts := ix.childTexts()
	if f, ok := ix.Embedder.(embed.Fitter); ok {
		if err := f.Fit(texts); err != nil {
			return fmt.Errorf("fitting embedder: %w", err)
		}
		opts.OnProgress(Progress{Stage: StageFit, Done: len(texts), Total: len(texts)})
	}
	store := opts.Store
	if store == nil {
		embedded, err := vectorstore.NewEmbedded(vectorstore.EmbeddedOptions{})
		if err != nil {
			return err
		}
		store = embedded
	}
	ctxs := newContexts(docs, ix.Parents, ix.Embedder, opts.ContextWeight)
	meta := parentMetadata(ix.Parents)
	for from := 0; from < len(texts); from += opts.BatchSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		to := min(from+opts.BatchSize, len(texts))
		if err := embedBatch(ctx, ix.Embedder, ctxs, meta, store, ix.Children[from:to], texts[from:to]); err != nil {
			return err
		}
		opts.OnProgress(Progress{Stage: StageEmbed, Done: to, Total: len(texts)})
	}
	ix.Store = store
	return nil
}

// embedBatch embeds one batch of children and upserts them.
func embedBatch(ctx context.Context, e embed.Embedder, ctxs *contexts, meta map[string]map[string]string, store vectorstore.VectorStore, children []hierarchy.Child, texts []string) error {
	vecs, err := e.EmbedDocuments(ctx, texts)
	if err != nil {
		return fmt.Errorf("embedding children: %w", err)
	}
	if err := ctxs.add(ctx, children, vecs); err != nil {
		return err
	}
	records := make([]vectorstore.Record, len(children))
	for i, c := range children {
		records[i] = vectorstore.Record{ID: c.ID, ParentID: c.ParentID, DocID: c.DocID, Ordinal: c.Ordinal, Vector: vecs[i], Text: c.Text, Metadata: meta[c.ParentID]}
	}
	if err := store.Upsert(ctx, records); err != nil {
		return fmt.Errorf("indexing children: %w", err)
	}
	return nil
}

// parentMetadata maps each parent with metadata to it; children carry
// their document's metadata through their parent.
func parentMetadata(parents []hierarchy.Parent) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, p := range parents {
		if len(p.Metadata) > 0 {
			out[p.ID] = p.Metadata
		}
	}
	return out
}

// childTexts returns what is embedded for each child: its text, after the
// heading of its section when its parent has a heading path, so that a
// child is found by the words of the heading it sits under.
func (ix *Index) childTexts() []string {
	headings := map[string]string{}
	for _, p := range ix.Parents {
		if n := len(p.HeadingPath); n > 0 {
			headings[p.ID] = p.HeadingPath[n-1]
		}
	}
	texts := make([]string, len(ix.Children))
	for i, c := range ix.Children {
		texts[i] = c.Text
		if h := headings[c.ParentID]; h != "" {
			texts[i] = h + "\n\n" + c.Text
		}
	}
	return texts
}

// Retriever returns a retriever over the in-memory index; it merges
// overlapping sentence windows.
func (ix *Index) Retriever() *retrieval.Retriever {
	return &retrieval.Retriever{Embedder: ix.Embedder, Children: ix.Store, Parents: parentstore.NewMemory(ix.Parents), MergeOverlaps: ix.Windows}
}

// isWindows reports whether a document splitter makes sentence windows.
func isWindows(s hierarchy.DocumentSplitter) bool {
	b, ok := s.(*hierarchy.Builder)
	return ok && b.Strategy == hierarchy.SentenceWindow
}
