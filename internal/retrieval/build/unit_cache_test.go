package build_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parentrag/parentrag/api/v1alpha1"

	"github.com/parentrag/parentrag/internal/eval/evaltest"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// createdAt stamps every manifest of these tests, so bundles compare byte
// for byte.
var createdAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// cachedBuild builds docs with policy spec into a new directory, with the
// unit cache in cacheDir ("" for none), and returns the bundle's directory
// and how many documents were reused.
func cachedBuild(t *testing.T, docs []hierarchy.Document, spec policy.Compiled, cacheDir string) (string, int) {
	t.Helper()
	return buildInto(t, docs, spec, cacheDir, bundle.VectorStoreRef{})
}

// buildInto is cachedBuild with the children kept where store says.
func buildInto(t *testing.T, docs []hierarchy.Document, spec policy.Compiled, cacheDir string, store bundle.VectorStoreRef) (string, int) {
	t.Helper()
	dir, built := buildRuns(t, docs, spec, cacheDir, store)
	return dir, built.Reused
}

// buildRuns is buildInto returning what Run returned, whose counts of
// runs it checks: one for each segment of a build into segments, none
// reused without a cache; none at all for another child index.
func buildRuns(t *testing.T, docs []hierarchy.Document, spec policy.Compiled, cacheDir string, store bundle.VectorStoreRef) (string, build.Built) {
	t.Helper()
	cfg := bundle.Embedder{Kind: bundle.EmbedderLexical, K1: bm25.DefaultK1, B: bm25.DefaultB, ContextWeight: indexer.DefaultContextWeight}
	e, err := build.NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	digest := bundle.SourceDigest(docs)
	reported := -1
	dir := filepath.Join(t.TempDir(), "bundle")
	built, err := build.Run(context.Background(), build.Request{
		Docs: docs, Policy: spec.Manifested(), Embedder: e, EmbedderConfig: cfg,
		Revision: bundle.Revision(spec.Revision, digest, cfg, store, ""), SourceDigest: digest, VectorStore: store,
		OnProgress: func(p indexer.Progress) {
			if p.Stage == indexer.StageSplit && p.Done == p.Total {
				reported = p.Reused
			}
		},
		Dir: dir, UnitCacheDir: cacheDir, CreatedAt: createdAt,
	})
	if err != nil {
		t.Fatal(err)
	}
	if reported != built.Reused {
		t.Fatalf("the split stage reported %d documents reused, Run %d", reported, built.Reused)
	}
	checkRuns(t, built, store, cacheDir)
	return dir, built
}

// checkRuns fails unless built counts runs as buildRuns says.
func checkRuns(t *testing.T, built build.Built, store bundle.VectorStoreRef, cacheDir string) {
	t.Helper()
	if store.Kind != segments.Kind {
		if built.Runs != nil {
			t.Fatalf("a build into %q counted runs: %+v", store.Kind, *built.Runs)
		}
		return
	}
	segs := len(built.Manifest.VectorStore.Segments)
	if r := built.Runs; r == nil || r.Reused+r.Built != segs || (cacheDir == "" && r.Reused != 0) {
		t.Fatalf("runs counted %+v for %d segments (cache %q)", r, segs, cacheDir)
	}
}

// sameBundles fails unless directories a and b hold the same files with
// the same bytes.
func sameBundles(t *testing.T, a, b string) {
	t.Helper()
	fa, fb := readTree(t, a), readTree(t, b)
	if len(fa) != len(fb) {
		t.Fatalf("%d files against %d", len(fa), len(fb))
	}
	for name, data := range fa {
		if other, ok := fb[name]; !ok || !bytes.Equal(data, other) {
			t.Errorf("%s differs (present in both: %v)", name, ok)
		}
	}
}

// readTree reads every regular file under dir by its relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// defaultPolicy compiles the default chunking policy.
func defaultPolicy(t *testing.T) policy.Compiled {
	t.Helper()
	compiled, err := policy.Compile(&policy.Default().Spec)
	if err != nil {
		t.Fatal(err)
	}
	return *compiled
}

// TestUnitCacheKeepsSquadBundlesIdentical checks on the SQuAD v1.1 dev
// articles that a build filling the unit cache and one reusing every unit
// both write exactly the bundle of a build without cache.
func TestUnitCacheKeepsSquadBundlesIdentical(t *testing.T) {
	corpus, _, err := evaltest.LoadSet(sharedtest.Dir(t, "eval", "squad-v1.1-dev"), "articles.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	spec := defaultPolicy(t)
	cold, _ := cachedBuild(t, corpus.Docs, spec, "")
	cache := t.TempDir()
	filled, reused := cachedBuild(t, corpus.Docs, spec, cache)
	if reused != 0 {
		t.Errorf("an empty cache reused %d documents", reused)
	}
	sameBundles(t, cold, filled)
	warm, reused := cachedBuild(t, corpus.Docs, spec, cache)
	if reused != len(corpus.Docs) {
		t.Errorf("a warm cache reused %d of %d documents", reused, len(corpus.Docs))
	}
	sameBundles(t, cold, warm)
}

// TestUnitCacheAfterEdits checks that after each kind of edit a build with
// a warm cache writes exactly the bundle of a build from scratch, reusing
// the unit of every document the edit left alone, and none after a
// change of policy.
func TestUnitCacheAfterEdits(t *testing.T) {
	base := synthtest.New(3, 5000).Documents(40)
	spec := defaultPolicy(t)
	other := policy.Default().Spec
	other.Child = &v1alpha1.ChunkSize{ChunkSize: 150}
	otherSpec, err := policy.Compile(&other)
	if err != nil {
		t.Fatal(err)
	}
	edits := []struct {
		name   string
		edit   func([]hierarchy.Document) []hierarchy.Document
		spec   policy.Compiled
		reused int
	}{
		{"unchanged", func(d []hierarchy.Document) []hierarchy.Document { return d }, spec, 40},
		{"add", func(d []hierarchy.Document) []hierarchy.Document {
			return append(d, synthtest.New(4, 5000).Document("doc-new", 4))
		}, spec, 40},
		{"edit", func(d []hierarchy.Document) []hierarchy.Document {
			d[7].Text += "\n\nOne more sentence about zebras."
			return d
		}, spec, 39},
		{"retitle", func(d []hierarchy.Document) []hierarchy.Document { d[8].Title = "Another title"; return d }, spec, 39},
		{"metadata", func(d []hierarchy.Document) []hierarchy.Document {
			d[9].Metadata = map[string]string{"lang": "en"}
			return d
		}, spec, 39},
		{"delete", func(d []hierarchy.Document) []hierarchy.Document { return append(d[:3], d[4:]...) }, spec, 39},
		{"rename", func(d []hierarchy.Document) []hierarchy.Document { d[5].ID = "doc-renamed"; return d }, spec, 39},
		{"policy", func(d []hierarchy.Document) []hierarchy.Document { return d }, *otherSpec, 0},
	}
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			cachedBuild(t, base, spec, cache)
			docs := tt.edit(clone(base))
			warm, reused := cachedBuild(t, docs, tt.spec, cache)
			if reused != tt.reused {
				t.Errorf("reused %d documents, want %d", reused, tt.reused)
			}
			cold, _ := cachedBuild(t, docs, tt.spec, "")
			sameBundles(t, cold, warm)
		})
	}
}

// TestUnitCacheRebuildsDamagedUnits checks that a damaged pack is never
// trusted: a unit whose bytes fail their checksum is made again, a pack
// whose footer or frame is damaged has every unit made again, the bundle
// is the one a build without cache writes, and the build leaves a sound
// pack that the next one reuses whole.
func TestUnitCacheRebuildsDamagedUnits(t *testing.T) {
	docs := synthtest.New(6, 5000).Documents(12)
	spec := defaultPolicy(t)
	cold, _ := cachedBuild(t, docs, spec, "")
	damage := []struct {
		name   string
		damage func([]byte) []byte
		reused int
	}{
		{"one unit's bytes", func(b []byte) []byte { b[len("PRUPACK1")+10] ^= 1; return b }, len(docs) - 1},
		{"the footer's checksum", func(b []byte) []byte { b[len(b)-5] ^= 1; return b }, 0},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, 0},
		{"empty", func([]byte) []byte { return nil }, 0},
	}
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			cache := t.TempDir()
			cachedBuild(t, docs, spec, cache)
			packs := unitFiles(t, cache)
			if len(packs) != 1 {
				t.Fatalf("%d packs after one build, want 1", len(packs))
			}
			data, err := os.ReadFile(packs[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(packs[0], d.damage(data), 0o644); err != nil {
				t.Fatal(err)
			}
			warm, reused := cachedBuild(t, docs, spec, cache)
			if reused != d.reused {
				t.Errorf("reused %d documents, want %d", reused, d.reused)
			}
			sameBundles(t, cold, warm)
			if _, reused := cachedBuild(t, docs, spec, cache); reused != len(docs) {
				t.Errorf("after the repair, reused %d of %d documents", reused, len(docs))
			}
		})
	}
}

// unitFiles lists the packs of the unit cache in dir (one file per scope,
// named *.pack), in lexical order.
func unitFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// clone copies docs deeply enough for an edit to leave the original alone.
func clone(docs []hierarchy.Document) []hierarchy.Document {
	out := make([]hierarchy.Document, len(docs))
	copy(out, docs)
	return out
}

// TestRunStreamsTheBundleSaveWrites checks that a build streaming its
// children into the bundle's child index, its units through a spill file
// and its parents into the parent store writes exactly the bundle that
// saving the same index built in memory writes, and leaves nothing but the
// bundle (no spill) in or beside it.
func TestRunStreamsTheBundleSaveWrites(t *testing.T) {
	docs := synthtest.New(5, 5000).Documents(60)
	spec := defaultPolicy(t)
	streamed, _ := cachedBuild(t, docs, spec, "")
	m, err := bundle.ReadManifest(streamed)
	if err != nil {
		t.Fatal(err)
	}
	// The checksums its writers recorded as they wrote are the files'.
	if err := bundle.VerifyFiles(context.Background(), streamed, m); err != nil {
		t.Fatal(err)
	}
	e, err := build.NewEmbedder(m.Embedder)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := indexer.Build(context.Background(), docs, spec.Manifested().Splitter, e, indexer.Options{ContextWeight: float32(m.Embedder.ContextWeight)})
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "bundle")
	bundletest.SaveIndex(t, saved, ix, m)
	sameBundles(t, streamed, saved)
	if entries, _ := os.ReadDir(filepath.Dir(streamed)); len(entries) != 1 {
		t.Errorf("the build left %d entries beside the bundle, want 1", len(entries))
	}
}

// TestRunLeavesNothingWhenCancelled checks that a build cancelled while
// its children stream into the bundle removes the bundle it started.
func TestRunLeavesNothingWhenCancelled(t *testing.T) {
	var stages []string
	parent := t.TempDir()
	req := request(t, filepath.Join(parent, "bundle"), &stages)
	ctx, cancel := context.WithCancel(context.Background())
	next := req.OnProgress
	req.OnProgress = func(p indexer.Progress) {
		next(p)
		if p.Stage == indexer.StageFit {
			cancel()
		}
	}
	if _, err := build.Run(ctx, req); err == nil {
		t.Fatal("a cancelled build succeeded")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a cancelled build left %d entries, want none", len(entries))
	}
}
