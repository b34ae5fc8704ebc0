package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/source"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// embeddingFlags choose the embedder of a new index.
type embeddingFlags struct {
	endpoint   string
	model      string
	dimensions int
	apiKeyEnv  string
	// contextWeight < 0 means the embedder's default.
	contextWeight float64
}

// register adds the embedding flags to cmd.
func (f *embeddingFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.endpoint, "embedding-endpoint", "", "OpenAI-compatible embeddings endpoint (default: the offline lexical BM25 embedder)")
	cmd.Flags().StringVar(&f.model, "embedding-model", "", "embedding model name, with --embedding-endpoint")
	cmd.Flags().IntVar(&f.dimensions, "embedding-dimensions", 0, "embedding dimensions to request (0: the model's own)")
	cmd.Flags().StringVar(&f.apiKeyEnv, "embedding-api-key-env", "OPENAI_API_KEY", "environment variable holding the API key")
	cmd.Flags().Float64Var(&f.contextWeight, "context-weight", -1, fmt.Sprintf("weight of each child's context (title and parent text) in its vector (default %g for the lexical embedder, 0 for an endpoint)", indexer.DefaultContextWeight))
}

// weight returns the context weight to index with.
func (f *embeddingFlags) weight() float64 {
	switch {
	case f.contextWeight >= 0:
		return f.contextWeight
	case f.endpoint == "":
		return indexer.DefaultContextWeight
	default:
		return 0
	}
}

// build returns the embedder and the configuration recorded in the manifest.
func (f *embeddingFlags) build() (embed.Embedder, bundle.Embedder, error) {
	cfg := bundle.Embedder{Kind: bundle.EmbedderLexical, K1: bm25.DefaultK1, B: bm25.DefaultB, ContextWeight: f.weight()}
	if f.endpoint != "" {
		// Both vectors, BM25 and the model's: a query searches either or
		// both (--search).
		cfg = bundle.Embedder{Kind: bundle.EmbedderHybrid, K1: bm25.DefaultK1, B: bm25.DefaultB,
			Endpoint: f.endpoint, Model: f.model, Dimensions: f.dimensions, APIKeyEnv: f.apiKeyEnv, ContextWeight: f.weight()}
	}
	e, err := build.NewEmbedder(cfg)
	return e, cfg, err
}

// newLocalIndexCommand builds a revision bundle from files and folders.
func newLocalIndexCommand() *cobra.Command {
	var (
		policyPath, out string
		childIndex      string
		replace, quiet  bool
		emb             embeddingFlags
		units           unitCacheFlags
		otlpEndpoint    string
	)
	cmd := &cobra.Command{
		Use:   "index --policy POLICY.yaml --out DIR PATH...",
		Short: "Index files and folders (Markdown, text, HTML, PDF, DOCX, JSON Lines) into a local index directory",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if out == "" {
				return fmt.Errorf("--out is required: the directory to write the index to")
			}
			ctx, stopTracing, err := startTracing(cmd, otlpEndpoint, "parentrag")
			if err != nil {
				return err
			}
			defer stopTracing()
			ctx, span := telemetry.Start(ctx, telemetry.SpanLocalIndex)
			defer func() { telemetry.End(span, err) }()
			build.TuneCollector()
			store, err := childIndexRef(childIndex, emb.endpoint)
			if err != nil {
				return err
			}
			if err := checkOut(out, replace); err != nil {
				return err
			}
			unlock, err := lockOut(out)
			if err != nil {
				return err
			}
			defer unlock()
			compiled, err := loadPolicy(policyPath)
			if err != nil {
				return err
			}
			unitCache, err := units.resolve()
			if err != nil {
				return err
			}
			loaded, err := source.LoadPathsReport(ctx, args)
			if err != nil {
				return err // it counts what was skipped and names the first unreadable file
			}
			for _, e := range slices.Concat(loaded.Refused, loaded.LeftOut, loaded.Empty) {
				fmt.Fprintf(cmd.ErrOrStderr(), "skipped: %v\n", e)
			}
			req := indexRequest{docs: loaded.Docs, compiled: compiled, emb: &emb, store: store, out: out, replace: replace, unitCache: unitCache, unitMaxAge: units.maxAge}
			built, err := indexDocuments(ctx, req, newProgressReporter(cmd.ErrOrStderr(), quiet))
			if err != nil {
				return err
			}
			m := built.Manifest
			fmt.Fprintf(cmd.OutOrStdout(), "indexed %d documents into %d parents and %d children (revision %s, %s) in %s%s\n",
				m.Documents, m.Parents, m.Children, m.Revision, humanBytes(m.Bytes), out, skippedNote(loaded))
			if unitCache != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "reused %d of %d documents%s from the unit cache %s\n", built.Reused, m.Documents, runsReused(built.Runs), unitCache)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&policyPath, "policy", "", "ChunkingPolicy YAML file (default: the built-in default policy)")
	cmd.Flags().StringVar(&out, "out", "", "directory to write the index to")
	cmd.Flags().BoolVar(&replace, "replace", false, "replace an existing index in --out")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "do not report progress")
	cmd.Flags().StringVar(&childIndex, "child-index", bundle.VectorStoreEmbedded, "how the index keeps its children: embedded (BM25 vectors) or segments (counts per group of documents, lexical embedder only)")
	emb.register(cmd)
	units.register(cmd)
	otlpFlag(cmd.Flags(), &otlpEndpoint, "the build (reading, splitting, embedding, indexing)")
	return cmd
}

// skippedNote says, after the summary, how many files and documents were
// left out (each was reported on stderr), or "".
func skippedNote(l source.Loaded) string {
	var parts []string
	if n := len(l.Refused); n > 0 {
		parts = append(parts, fmt.Sprintf("%d unreadable files skipped", n))
	}
	if n := len(l.LeftOut); n > 0 {
		parts = append(parts, fmt.Sprintf("%d files not read", n))
	}
	if n := len(l.Empty); n > 0 {
		parts = append(parts, fmt.Sprintf("%d empty documents skipped", n))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ": see above)"
}

// childIndexRef is where a local index keeps its children, refusing a
// kind it does not know and segments for an embedder other than the
// lexical one (endpoint set).
func childIndexRef(kind, endpoint string) (bundle.VectorStoreRef, error) {
	switch kind {
	case bundle.VectorStoreEmbedded:
		return bundle.VectorStoreRef{}, nil
	case bundle.VectorStoreSegments:
		if endpoint != "" {
			return bundle.VectorStoreRef{}, fmt.Errorf("--child-index segments keeps the lexical embedder's counts; it cannot hold the vectors of --embedding-endpoint")
		}
		return bundle.VectorStoreRef{Kind: bundle.VectorStoreSegments}, nil
	}
	return bundle.VectorStoreRef{}, fmt.Errorf("--child-index %q: want %s or %s", kind, bundle.VectorStoreEmbedded, bundle.VectorStoreSegments)
}

// checkOut refuses, before any work is done, an --out that would lose
// data: an existing path unless replace is set and, even then, anything
// but an empty directory or one holding a parentrag index, so that a
// mistyped --out never wipes a folder of documents.
func checkOut(out string, replace bool) error {
	info, err := os.Stat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out %s: %w", out, unwrapPathError(err))
	}
	if !replace {
		return fmt.Errorf("%s already exists: pass --replace to replace the index in it, or choose another --out", out)
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory: refusing to replace it with an index", out)
	}
	if _, err := os.Stat(filepath.Join(out, bundle.ManifestFile)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("--out %s: %w", out, unwrapPathError(err))
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not a parentrag index (no %s): refusing to replace it", out, bundle.ManifestFile)
	}
	return nil
}

// removeTemps removes the temporary folders that earlier runs writing the
// same --out left when they were killed (<out>.tmp-<digits>, and .old
// beside them): only folders of that pattern holding nothing but index
// files, and only those dead reports true for. Failures are ignored: the
// folders are skipped as documents anyway.
func removeTemps(out string, dead func(dir string) bool) {
	clean := filepath.Clean(out)
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(clean), globEscape(filepath.Base(clean))+".tmp-*"))
	for _, dir := range matches {
		rest := strings.TrimPrefix(filepath.Base(dir), filepath.Base(clean)+".tmp-")
		rest = strings.TrimSuffix(rest, ".old")
		if rest == "" || strings.Trim(rest, "0123456789") != "" || !source.IsBundleTemp(dir) {
			continue
		}
		if dead(dir) {
			os.RemoveAll(dir)
		}
	}
}

// globEscape escapes filepath.Match's metacharacters in s.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// indexRequest is what indexDocuments builds: docs split by the policy,
// embedded as emb says, saved into out, with the unit cache in unitCache
// ("" for none) pruned of units unused for unitMaxAge.
type indexRequest struct {
	docs       []hierarchy.Document
	compiled   *policy.Compiled
	emb        *embeddingFlags
	store      bundle.VectorStoreRef
	out        string
	replace    bool
	unitCache  string
	unitMaxAge time.Duration
}

// indexDocuments builds and saves a bundle for req.docs, its revision
// named by the policy, the documents and the embedder alone, and returns
// what the build made (its manifest, and what the unit cache gave).
func indexDocuments(ctx context.Context, req indexRequest, progress *progressReporter) (build.Built, error) {
	e, ecfg, err := req.emb.build()
	if err != nil {
		return build.Built{}, err
	}
	digest := bundle.SourceDigest(req.docs)
	built, err := build.Run(ctx, build.Request{
		Docs: req.docs, Policy: req.compiled.Manifested(), Embedder: e, EmbedderConfig: ecfg,
		Revision: bundle.Revision(req.compiled.Revision, digest, ecfg, req.store, ""), SourceDigest: digest, VectorStore: req.store,
		OnProgress: progress.report,
		OnUnitsNotStored: func(n int, first error) {
			fmt.Fprintf(progress.w, "warning: %d units could not be written to the unit cache and are made again next run: %v\n", n, first)
		},
		Dir: req.out, Replace: req.replace, UnitCacheDir: req.unitCache, UnitCacheMaxAge: req.unitMaxAge,
	})
	progress.finishStage()
	return built, err
}

// runsReused says, for a build into segments, how many of its runs of
// documents the cache gave: " (in 3 of 4 runs)"; "" for another build.
func runsReused(runs *build.Runs) string {
	if runs == nil {
		return ""
	}
	return fmt.Sprintf(" (in %d of %d runs)", runs.Reused, runs.Reused+runs.Built)
}

// humanBytes formats a size with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
