// Package indexer builds an index from documents: split into parents and
// children, fit and embed the children, and fill the child store. It runs
// in memory; the bundle package persists what it builds.
package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/telemetry"
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
// (documents while splitting, children while embedding). While splitting,
// Reused counts the documents done whose unit came from the unit cache.
type Progress struct {
	Stage  string
	Done   int
	Total  int
	Reused int
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
	Store index.Writer
	// ContextWeight, when above zero, adds each child's context (its
	// document's title and its parent's text) to the child's vector with
	// this weight, so a child is scored as itself plus ContextWeight times
	// its context. Only children are indexed either way.
	ContextWeight float32
	// Units, when set, keeps each document's unit (its split and
	// analyses) between builds, keyed by everything it depends on: a
	// document whose unit is there is neither split nor analysed. The
	// index is the same, byte for byte, with or without it. A build with
	// a unit cache streams (see SpillDir) into the cache's directory: its
	// spill becomes the cache's pack for the next build.
	Units *UnitCache
	// UnitScope identifies the splitter for Units: the chunking policy's
	// revision and spec as the caller knows them. It enters every unit
	// key, so a change of policy never reuses a unit; required with Units.
	UnitScope []byte
	// SpillDir, when set, streams the build: the first pass writes each
	// document's unit to a file in this directory as soon as it is
	// counted, and the second reads it back just before embedding it. The
	// build then holds a unit per worker and the batch being embedded
	// instead of every unit, and the Index keeps no Parents or Children
	// (ParentCount and ChildCount count them; OnParent receives the
	// parents). The file is removed before Build returns. With Units, the
	// build streams into the cache's directory instead.
	SpillDir string
	// OnParent, when set, receives every parent in document order, each
	// before the first of its children is embedded. An error fails the
	// build.
	OnParent func(hierarchy.Parent) error
}

// Index is a built index held in memory.
type Index struct {
	Documents int
	// Reused counts the documents whose unit came from Options.Units.
	Reused int
	// Parents holds every unit the parent store keeps: the parents and,
	// in a hierarchy of more than two levels, the larger units.
	Parents  []hierarchy.Parent
	Children []hierarchy.Child
	// ParentCount and ChildCount count the units the parent store holds
	// (parents and ancestors) and the children built, also when a
	// streaming build (Options.SpillDir) keeps neither.
	ParentCount, ChildCount int
	Embedder                embed.Embedder
	// UnitsNotStored counts the units Options.Units failed to keep (all
	// of them, when the build's pack could not be written), and
	// UnitStoreErr says why: the next build makes them again.
	UnitsNotStored int
	UnitStoreErr   error
	// Store holds the children: the embedded store, or Options.Store.
	Store index.Writer
	// ParentsOverlap is true when the splitter's strategy declares that
	// its parents overlap (sentence windows): its Retriever merges
	// overlapping hits.
	ParentsOverlap bool
	// Leaf names the level of the children (child, or sentence).
	Leaf hierarchy.Level
}

// Build splits, embeds and indexes docs. Parents and children come out in
// document order whatever the concurrency, so the same input always yields
// the same index. Each document is split, and each child text and parent
// context analysed, exactly once: the BM25 part of the embedder is fitted
// on the analyses of every child text and weighs them without analysing
// again, bit for bit as Fit and EmbedDocuments on the texts would. Another
// embedder that is a Fitter is fitted on every child text before any is
// embedded. The units kept for Options.Units are written as the first pass
// spills them; failing to keep them (counted in Index.UnitsNotStored)
// never fails the build. While tracing is on, the first pass is a span of
// the split stage and the second (fit and embed) one of the embed stage.
func Build(ctx context.Context, docs []hierarchy.Document, b hierarchy.DocumentSplitter, e embed.Embedder, opts Options) (*Index, error) {
	opts = opts.withDefaults()
	shape := unitShape{analysed: embed.LexicalPart(e) != nil, contexts: opts.ContextWeight > 0}
	if opts.Units != nil && len(opts.UnitScope) == 0 {
		return nil, errors.New("a unit cache needs a unit scope naming the splitter")
	}
	source, pass, err := tracedFirstPass(ctx, docs, b, shape, opts)
	if err != nil {
		return nil, err
	}
	defer source.close()
	ix := &Index{Documents: len(docs), Embedder: e, ParentsOverlap: parentsOverlap(b), Leaf: leafOf(b)}
	if source.storeErr != nil {
		ix.UnitsNotStored, ix.UnitStoreErr = len(docs), source.storeErr
	}
	ix.Reused, ix.ParentCount, ix.ChildCount = pass.reused, pass.parents, pass.children
	if source.spill == nil {
		ix.gather(pass.units)
	}
	if err := ix.secondPass(ctx, source, pass, opts); err != nil {
		return nil, err
	}
	return ix, nil
}

// tracedFirstPass is runFirstPass in a span of the split stage, which
// counts the documents, those the unit cache gave, and the parents and
// children made.
func tracedFirstPass(ctx context.Context, docs []hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, opts Options) (*unitSource, *firstPass, error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanSplit)
	source, pass, err := runFirstPass(ctx, docs, b, shape, opts)
	if err == nil && span.IsRecording() {
		span.SetAttributes(attribute.Int("parentrag.documents", len(docs)), attribute.Int("parentrag.reused", pass.reused),
			attribute.Int("parentrag.parents", pass.parents), attribute.Int("parentrag.children", pass.children))
	}
	telemetry.End(span, err)
	return source, pass, err
}

// secondPass fits the embedder and embeds every child into the store, in
// a span of the embed stage.
func (ix *Index) secondPass(ctx context.Context, source *unitSource, pass *firstPass, opts Options) (err error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanEmbed)
	defer func() { telemetry.End(span, err) }()
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("parentrag.children", ix.ChildCount), attribute.Int("parentrag.batch_size", opts.BatchSize))
	}
	if err := ix.fit(ctx, source, pass, opts); err != nil {
		return err
	}
	return ix.embedAll(ctx, source, pass.units, opts)
}

// runFirstPass makes or loads the units of docs and counts them (see
// unitsOf). When the unit cache cannot take the spill (a full disk, say),
// it runs the pass again without the cache, spilling to opts.SpillDir or
// the temporary directory: a cache only saves work, so it fails no build,
// and the source's storeErr says why it was left out.
func runFirstPass(ctx context.Context, docs []hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, opts Options) (*unitSource, *firstPass, error) {
	source, pass, err := firstPassOf(ctx, docs, b, shape, opts)
	if opts.Units == nil || !errors.Is(err, errCacheUnwritable) {
		return source, pass, err
	}
	cause := err
	opts.Units, opts.SpillDir = nil, cmp.Or(opts.SpillDir, os.TempDir())
	if source, pass, err = firstPassOf(ctx, docs, b, shape, opts); err != nil {
		return nil, nil, err
	}
	source.storeErr = cause
	return source, pass, nil
}

// firstPassOf readies the units of docs and runs the first pass over
// them; on failure, nothing is left open.
func firstPassOf(ctx context.Context, docs []hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, opts Options) (*unitSource, *firstPass, error) {
	source, err := newUnitSource(docs, b, shape, opts)
	if err != nil {
		return nil, nil, err
	}
	pass, err := source.unitsOf(ctx, opts)
	if err != nil {
		source.close()
		return nil, nil, err
	}
	return source, pass, nil
}

// gather puts the parents (each unit's, then its ancestors) and children
// of every unit, in order, into the index, and makes each unit's parents,
// ancestors and children views of the index's, so the build holds them
// once.
func (ix *Index) gather(units []*Unit) {
	parents, children := 0, 0
	for _, u := range units {
		parents, children = parents+u.stored(), children+len(u.Children)
	}
	ix.Parents = make([]hierarchy.Parent, 0, parents)
	ix.Children = make([]hierarchy.Child, 0, children)
	for _, u := range units {
		p, c := len(ix.Parents), len(ix.Children)
		ix.Parents = append(ix.Parents, u.Parents...)
		a := len(ix.Parents)
		ix.Parents = append(ix.Parents, u.Ancestors...)
		ix.Children = append(ix.Children, u.Children...)
		u.Parents, u.Ancestors = ix.Parents[p:a:a], ix.Parents[a:len(ix.Parents):len(ix.Parents)]
		u.Children = ix.Children[c:len(ix.Children):len(ix.Children)]
	}
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

// fit gives the embedder its corpus statistics: the BM25 part those the
// first pass counted; another Fitter reads every child text. It
// checks ctx first, so a cancelled build never reports success, even when
// there is nothing to embed.
func (ix *Index) fit(ctx context.Context, source *unitSource, pass *firstPass, opts Options) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	if lex := embed.LexicalPart(ix.Embedder); lex != nil {
		err = lex.FitCorpus(pass.stats)
	} else if f, ok := ix.Embedder.(embed.Fitter); ok {
		var texts []string
		if texts, err = source.childTexts(pass.units); err == nil {
			err = f.Fit(texts)
		}
	} else {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fitting embedder: %w", err)
	}
	opts.OnProgress(Progress{Stage: StageFit, Done: ix.ChildCount, Total: ix.ChildCount})
	return nil
}

// embedAll is the second pass of a build: it embeds the children in
// batches, in slot order, into opts.Store or a new embedded store, giving
// each unit its analyses back just before its children join a batch. It
// checks ctx before each batch, and tells ctx's span how long the store
// took to take the batches (parentrag.store_write_ms).
func (ix *Index) embedAll(ctx context.Context, source *unitSource, units []*Unit, opts Options) error {
	store := opts.Store
	if store == nil {
		embedded, err := embedded.New(embedded.Options{})
		if err != nil {
			return err
		}
		store = embedded
	}
	v := newVectorizer(ix.Embedder, opts.ContextWeight)
	batch := make([]slot, 0, opts.BatchSize)
	done := 0
	var writing time.Duration // in the store, for the embed span
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		records, err := v.records(ctx, batch)
		if err != nil {
			return err
		}
		began := time.Now()
		if err := store.Upsert(ctx, records); err != nil {
			return fmt.Errorf("indexing children: %w", err)
		}
		writing += time.Since(began)
		done += len(batch)
		releaseFinished(batch)
		batch = batch[:0]
		opts.OnProgress(Progress{Stage: StageEmbed, Done: done, Total: ix.ChildCount})
		return nil
	}
	var scratch bm25.AnalysisScratch
	for ui := range source.docs {
		u, err := source.take(ui, units, &scratch)
		if err != nil {
			return err
		}
		if err := handParents(u, opts.OnParent); err != nil {
			return err
		}
		parents := u.parentIndex()
		for i, c := range u.Children {
			p, ok := parents[c.ParentID]
			if !ok {
				return fmt.Errorf("child %s points to missing parent %s", c.ID, c.ParentID)
			}
			if batch = append(batch, slot{u: u, child: i, parent: p}); len(batch) == opts.BatchSize {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	ix.Store = store
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.Int64("parentrag.store_write_ms", writing.Milliseconds()))
	}
	return nil
}

// handParents gives the parents of u, then its ancestors, to onParent,
// when set.
func handParents(u *Unit, onParent func(hierarchy.Parent) error) error {
	if onParent == nil {
		return nil
	}
	for _, list := range [][]hierarchy.Parent{u.Parents, u.Ancestors} {
		for _, p := range list {
			if err := onParent(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// releaseFinished drops the analyses of the units whose last child is in
// the batch just embedded: no later batch reads them, so a build holds the
// analyses of the units not embedded yet only.
func releaseFinished(batch []slot) {
	for _, s := range batch {
		if s.child == len(s.u.Children)-1 {
			s.u.ChildTerms, s.u.ContextTerms = nil, nil
		}
	}
}

// Retriever returns a retriever over the in-memory index; it merges
// overlapping parents when the strategy's parents overlap. The children
// must be in an index that searches (any but a file writer, whose file is
// searched once loaded).
func (ix *Index) Retriever() *retrieve.Retriever {
	children, _ := ix.Store.(index.Searcher)
	return &retrieve.Retriever{Embedder: ix.Embedder, Children: children, Parents: parentstore.NewMemory(ix.Parents), MergeOverlaps: ix.ParentsOverlap, Leaf: ix.Leaf}
}

// leafOf names the level of a document splitter's children: its
// builder's smallest level, child for any other splitter.
func leafOf(s hierarchy.DocumentSplitter) hierarchy.Level {
	if b, ok := s.(*hierarchy.Builder); ok {
		return b.Leaf()
	}
	return hierarchy.LevelChild
}

// parentsOverlap reports whether a document splitter's parents overlap
// by design, as its builder's strategy declares; the flat baselines, whose
// parents are single chunks, never merge them.
func parentsOverlap(s hierarchy.DocumentSplitter) bool {
	b, ok := s.(*hierarchy.Builder)
	return ok && b.Strategy.ParentsOverlap()
}
