package build

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"time"

	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/index/postgres"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// Policy is the chunking policy a revision is split with, as its manifest
// records it.
type Policy struct {
	// Splitter splits documents into parents and children.
	Splitter hierarchy.DocumentSplitter
	// Revision is the policy's revision.
	Revision string
	// Spec is the normalised policy spec, JSON.
	Spec []byte
	// LengthUnit and Tokenizer name how lengths are measured.
	LengthUnit, Tokenizer string
}

// DefaultUnitCacheMaxAge is how long the builders of parentrag keep the
// units of a scope (a policy) that no build has used in their unit caches.
const DefaultUnitCacheMaxAge = 30 * 24 * time.Hour

// Request is one revision build: the documents in, the bundle out.
type Request struct {
	// Docs are the documents of the revision.
	Docs []hierarchy.Document
	// Policy splits them.
	Policy Policy
	// Embedder embeds the children; EmbedderConfig is how the manifest
	// records it, and its ContextWeight weighs each child's context.
	Embedder       embed.Embedder
	EmbedderConfig bundle.Embedder
	// Revision and SourceDigest name the revision in its manifest.
	Revision, SourceDigest string
	// VectorStore records where the children live; Collection, when set,
	// is the Milvus collection to create and fill (nil: the bundle holds
	// the vectors). Kind bundle.VectorStoreSegments writes the children,
	// for the lexical embedder, as segments of counts in the bundle
	// instead of an embedded store's vectors (see runSegments).
	VectorStore bundle.VectorStoreRef
	Collection  *milvus.Config
	// Postgres, when set, is the PostgreSQL table to create and fill, as
	// Collection is for Milvus.
	Postgres *postgres.Config
	// Workers embed in parallel; 0 means the indexer's default.
	Workers int
	// OnProgress receives every progress report of the indexer, then
	// SaveProgress (when its Stage is set) before the bundle is written.
	OnProgress   func(indexer.Progress)
	SaveProgress indexer.Progress
	// Dir is where the bundle is saved; Replace allows replacing a bundle
	// already there.
	Dir     string
	Replace bool
	// UnitCacheDir, when set, keeps each document's split and analyses
	// between builds (see indexer.UnitCache): unchanged documents are
	// neither split nor analysed again, and the bundle is byte for byte
	// the one a build without the cache makes. "" means no cache.
	UnitCacheDir string
	// OnUnitsNotStored, when set, is told how many units the unit cache
	// failed to keep, and why, when it failed: the build goes on without
	// the cache (the next build makes them again) and succeeds.
	OnUnitsNotStored func(n int, first error)
	// UnitCacheMaxAge, when above zero, prunes after a successful build
	// the units of the scopes no build has used for that long.
	UnitCacheMaxAge time.Duration
	// CreatedAt stamps the manifest; zero means now.
	CreatedAt time.Time
}

// Built is what a build made: the saved bundle's manifest, how many of
// its documents the unit cache gave (0 without one) and, for a child
// index of segments, how many of its runs were reused and built.
type Built struct {
	Manifest bundle.Manifest
	Reused   int
	Runs     *Runs
}

// Runs counts the runs of documents of a build into segments: those
// whose segment and parent pack the cache gave, and those built.
type Runs struct{ Reused, Built int }

// Run builds the revision req describes and returns its manifest. When a
// collection is asked for, it is created, filled, flushed, indexed and
// loaded with its row count checked before the bundle is saved, so a
// saved bundle always points at a complete collection. Otherwise the
// children stream into the bundle's child index file as they are
// embedded (embedded.FileWriter). Either way each document's unit
// spills to the pending bundle's directory between the two passes and
// each parent goes straight into the parent store, so the build holds
// neither the index nor every unit in memory: beyond the documents, a
// unit per worker and a batch of children. The bundle is the same, byte
// for byte, as saving the index built in memory. While tracing is on, the
// build is a span of ctx's, with its stages (split, embed, index, save)
// below it.
func Run(ctx context.Context, req Request) (built Built, err error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanBuild)
	defer func() { endBuild(span, &req, built, err) }()
	// Reading the documents leaves as much garbage as their text, which
	// the collector's next cycle may count as live and set the heap goal
	// of the whole build to twice that: one collection now sets it from
	// what the build holds (the documents), for tens of milliseconds.
	runtime.GC()
	if req.VectorStore.Kind == bundle.VectorStoreSegments {
		return req.runSegments(ctx)
	}
	opts := indexer.Options{Workers: req.Workers, OnProgress: req.OnProgress, ContextWeight: float32(req.EmbedderConfig.ContextWeight)}
	started := time.Now()
	if req.UnitCacheDir != "" {
		var err error
		if opts.Units, err = indexer.OpenUnitCache(req.UnitCacheDir); err != nil {
			return Built{}, err
		}
		defer opts.Units.Close()
		opts.UnitScope = req.Policy.unitScope()
	}
	pending, err := bundle.Begin(req.Dir, req.Replace)
	if err != nil {
		return Built{}, err
	}
	if err := streamInto(pending, &opts); err != nil {
		pending.Abort()
		return Built{}, err
	}
	ix, err := req.index(ctx, pending, opts)
	if err != nil {
		pending.Abort()
		return Built{}, err
	}
	if ix.UnitsNotStored > 0 && req.OnUnitsNotStored != nil {
		req.OnUnitsNotStored(ix.UnitsNotStored, ix.UnitStoreErr)
	}
	if req.SaveProgress.Stage != "" && req.OnProgress != nil {
		req.OnProgress(req.SaveProgress)
	}
	m, err := traced(ctx, telemetry.SpanSave, func() (bundle.Manifest, error) { return pending.Commit(ix, req.manifest()) })
	if err != nil {
		return Built{}, err
	}
	if opts.Units != nil && req.UnitCacheMaxAge > 0 {
		// Best effort: a unit left behind costs disk, never correctness.
		_, _ = opts.Units.Prune(started.Add(-req.UnitCacheMaxAge))
	}
	return Built{Manifest: m, Reused: ix.Reused}, nil
}

// streamInto makes the build stream into the pending bundle: units spill
// to its directory between the passes and parents go straight into its
// parent store, so the build never holds every unit or parent.
func streamInto(pending *bundle.Pending, opts *indexer.Options) error {
	parents, err := pending.Parents()
	if err != nil {
		return err
	}
	opts.SpillDir, opts.OnParent = pending.Dir(), parents.Add
	return nil
}

// index builds the index into the collection req asks for, or into a
// file writer in pending's child directory, and finishes that store.
func (req *Request) index(ctx context.Context, pending *bundle.Pending, opts indexer.Options) (*indexer.Index, error) {
	var finish func(int) error
	switch {
	case req.Postgres != nil:
		store, err := OpenTable(ctx, *req.Postgres)
		if err != nil {
			return nil, err
		}
		defer store.Close()
		opts.Store = store
		finish = func(n int) error {
			if err := store.Finish(ctx, n); err != nil {
				return fmt.Errorf("finishing table %s: %w", store.Name(), err)
			}
			return nil
		}
	case req.Collection != nil:
		store, err := OpenCollection(ctx, *req.Collection)
		if err != nil {
			return nil, err
		}
		defer store.Close(ctx)
		opts.Store = store
		finish = func(n int) error {
			if err := store.Finish(ctx, n); err != nil {
				return fmt.Errorf("finishing collection %s: %w", store.Name(), err)
			}
			return nil
		}
	default:
		w, err := embedded.NewFileWriter(pending.ChildrenDir(), embedded.Options{})
		if err != nil {
			return nil, err
		}
		defer w.Close()
		opts.Store = w
		finish = func(n int) error {
			if err := w.Finish(ctx, n); err != nil {
				return fmt.Errorf("writing child index: %w", err)
			}
			return nil
		}
	}
	ix, err := indexer.Build(ctx, req.Docs, req.Policy.Splitter, req.Embedder, opts)
	if err != nil {
		return nil, err
	}
	return traced(ctx, telemetry.SpanIndex, func() (*indexer.Index, error) { return ix, finish(ix.ChildCount) })
}

// unitScope identifies the policy in unit keys: its revision, spec, length
// unit and tokenizer, each length-prefixed.
func (p Policy) unitScope() []byte {
	var b []byte
	for _, s := range []string{p.Revision, string(p.Spec), p.LengthUnit, p.Tokenizer} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// manifest is the manifest of the revision req builds, stamped now; Save
// adds the counts.
func (req *Request) manifest() bundle.Manifest {
	return bundle.Manifest{
		Revision: req.Revision, PolicyRevision: req.Policy.Revision, Policy: req.Policy.Spec,
		LengthUnit: req.Policy.LengthUnit, Tokenizer: req.Policy.Tokenizer,
		SourceDigest: req.SourceDigest, Embedder: req.EmbedderConfig, VectorStore: req.VectorStore,
		CreatedAt: cmp.Or(req.CreatedAt, time.Now()).UTC().Truncate(time.Second),
	}
}

// OpenCollection connects to Milvus and creates the collection cfg names;
// on failure nothing stays open.
func OpenCollection(ctx context.Context, cfg milvus.Config) (*milvus.Store, error) {
	store, err := milvus.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("milvus at %s: %w", cfg.Address, err)
	}
	if err := store.Create(ctx); err != nil {
		store.Close(ctx)
		return nil, fmt.Errorf("creating collection %s: %w", cfg.Collection, err)
	}
	return store, nil
}

// OpenTable connects to PostgreSQL and creates the table cfg names; on
// failure nothing stays open.
func OpenTable(ctx context.Context, cfg postgres.Config) (*postgres.Store, error) {
	store, err := postgres.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := store.Create(ctx); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}
