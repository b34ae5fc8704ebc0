package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// corpus is a few documents on distinct topics.
func corpus() []hierarchy.Document {
	return []hierarchy.Document{
		{ID: "rollout.md", Title: "Rollout", Text: "# Rollout\n\n" +
			"A new index revision is built beside the serving one. Query pods keep reading the old revision.\n\n" +
			"Verification compares row counts with the manifest and resolves sample children to parents.\n\n" +
			"Promotion moves the alias once the rolling update of the retriever deployment is complete."},
		{ID: "garden.md", Title: "Garden", Text: "# Garden\n\n" +
			"Tomatoes need full sun, deep watering and a stake to climb. Basil grows well beside tomatoes.\n\n" +
			"Compost improves the soil; mulch keeps moisture in during the dry summer weeks."},
		{ID: "sailing.txt", Text: "Sailing upwind means tacking: the boat zigzags across the wind. " +
			"A reef in the mainsail reduces heeling in strong gusts. The harbor master assigns moorings.",
			Metadata: map[string]string{"lang": "en"}},
		{ID: "unicode.md", Title: "Größe", Text: "Die Größe der Straße 🎉 ist beträchtlich. Café crème coûte cher."},
	}
}

func builder(t testing.TB) *hierarchy.Builder {
	t.Helper()
	parent, err := split.NewRecursive(split.DefaultOptions(200, 0))
	if err != nil {
		t.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(60, 10))
	if err != nil {
		t.Fatal(err)
	}
	return &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "policy-rev", Parent: parent, Child: child}
}

// buildIndex indexes docs in memory with the lexical embedder.
func buildIndex(t testing.TB, docs []hierarchy.Document) *indexer.Index {
	t.Helper()
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := indexer.Build(context.Background(), docs, builder(t), lex, indexer.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// manifestFor returns the manifest a caller fills in before saving.
func manifestFor(docs []hierarchy.Document, rev string) Manifest {
	e := Embedder{Kind: EmbedderLexical, K1: bm25.DefaultK1, B: bm25.DefaultB}
	digest := SourceDigest(docs)
	return Manifest{
		Revision:       rev,
		PolicyRevision: "policy-rev",
		Policy:         json.RawMessage(`{"strategy":"ParentChild"}`),
		LengthUnit:     "Characters",
		SourceDigest:   digest,
		Embedder:       e,
		CreatedAt:      time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

// save writes ix as a bundle into dir as a build does: Begin, then Commit.
func save(dir string, ix *indexer.Index, m Manifest, replace bool) (Manifest, error) {
	p, err := Begin(dir, replace)
	if err != nil {
		return m, err
	}
	return p.Commit(ix, m)
}

// saved builds and saves the corpus into dir.
func saved(t testing.TB, dir string, docs []hierarchy.Document, rev string) (*indexer.Index, Manifest) {
	t.Helper()
	ix := buildIndex(t, docs)
	m, err := save(dir, ix, manifestFor(docs, rev), false)
	if err != nil {
		t.Fatalf("save: %v", err)
	}
	return ix, m
}

// entries lists the names in dir, sorted.
func entries(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func open(t testing.TB, dir string) *Bundle {
	t.Helper()
	b, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

var queries = []string{
	"how is a new revision verified before promotion",
	"tomatoes and basil in full sun",
	"reef the mainsail in strong gusts",
	"Größe der Straße",
	"harbor",
	"nothing matches xylophone",
}

func TestSaveOpenRoundTrip(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "index")
	docs := corpus()
	ix, m := saved(t, dir, docs, "rev-a")

	if m.FormatVersion != FormatVersion || m.Documents != len(docs) || m.Parents != len(ix.Parents) || m.Children != len(ix.Children) {
		t.Errorf("manifest %+v does not describe the index (%d docs, %d parents, %d children)", m, len(docs), len(ix.Parents), len(ix.Children))
	}
	if m.Parents == 0 || m.Children <= m.Parents {
		t.Fatalf("index too small: %d parents, %d children", m.Parents, m.Children)
	}
	if got := entries(t, root); !reflect.DeepEqual(got, []string{"index"}) {
		t.Errorf("beside the bundle: %v, want only the bundle", got)
	}

	// Bytes is the size of everything but the manifest.
	var size int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != ManifestFile {
			info, _ := d.Info()
			size += info.Size()
		}
		return err
	})
	if m.Bytes != size || size == 0 {
		t.Errorf("manifest Bytes %d, files hold %d", m.Bytes, size)
	}

	read, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	json.Unmarshal(read.Policy, &a)
	json.Unmarshal(m.Policy, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("policy %s read back as %s", m.Policy, read.Policy)
	}
	read.Policy, m.Policy = nil, nil
	if !reflect.DeepEqual(read, m) {
		t.Errorf("manifest read back\n got %+v\nwant %+v", read, m)
	}

	bundle := open(t, dir)
	if bundle.Manifest.Revision != "rev-a" {
		t.Errorf("opened revision %q", bundle.Manifest.Revision)
	}
	mem := ix.Retriever()
	ctx := context.Background()
	for _, opts := range []retrieve.Options{{}, {MaxParents: 10, ChildTopK: 3}, {Budget: 80}, {Aggregation: retrieve.AggregateSum}} {
		for _, q := range queries {
			want, err := mem.Retrieve(ctx, q, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := bundle.Retriever.Retrieve(ctx, q, opts)
			if err != nil {
				t.Fatalf("Retrieve(%q) from the bundle: %v", q, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Retrieve(%q, %+v):\n bundle %+v\nmemory %+v", q, opts, got, want)
			}
		}
	}
	// And the answers make sense: each topic query finds its document first.
	for q, doc := range map[string]string{queries[0]: "rollout.md", queries[1]: "garden.md", queries[2]: "sailing.txt", queries[3]: "unicode.md"} {
		res, err := bundle.Retriever.Retrieve(ctx, q, retrieve.Options{})
		if err != nil || len(res) == 0 || res[0].DocID != doc {
			t.Errorf("Retrieve(%q) = %+v, %v; want %s first", q, res, err, doc)
		}
	}
}

func TestSaveRefusesExistingDir(t *testing.T) {
	for _, kind := range []string{"bundle", "empty dir", "file"} {
		t.Run(kind, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "index")
			switch kind {
			case "bundle":
				saved(t, dir, corpus(), "rev-a")
			case "empty dir":
				os.Mkdir(dir, 0o755)
			case "file":
				os.WriteFile(dir, []byte("x"), 0o644)
			}
			before := entries(t, root)
			docs := corpus()[:2]
			_, err := save(dir, buildIndex(t, docs), manifestFor(docs, "rev-b"), false)
			if err == nil || !strings.Contains(err.Error(), "already exists") {
				t.Fatalf("Save over %s = %v, want an already-exists error", kind, err)
			}
			if got := entries(t, root); !reflect.DeepEqual(got, before) {
				t.Errorf("folder changed from %v to %v", before, got)
			}
			if kind == "bundle" {
				if m, err := ReadManifest(dir); err != nil || m.Revision != "rev-a" {
					t.Errorf("old bundle now %+v, %v", m, err)
				}
			}
		})
	}
}

func TestSaveReplace(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "index")
	docsA := corpus()
	ixA, _ := saved(t, dir, docsA, "rev-a")
	old := open(t, dir)
	marker := filepath.Join(dir, "old-marker")
	if err := os.WriteFile(marker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	docsB := corpus()[1:3]
	ixB := buildIndex(t, docsB)
	m, err := save(dir, ixB, manifestFor(docsB, "rev-b"), true)
	if err != nil {
		t.Fatalf("Save with replace: %v", err)
	}
	if m.Documents != 2 || m.Parents != len(ixB.Parents) {
		t.Errorf("manifest %+v", m)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("old content survived the replace (%v)", err)
	}
	if got := entries(t, root); !reflect.DeepEqual(got, []string{"index"}) {
		t.Errorf("beside the bundle: %v", got)
	}
	b := open(t, dir)
	if b.Manifest.Revision != "rev-b" || b.Manifest.Parents != len(ixB.Parents) {
		t.Errorf("opened %+v after replace", b.Manifest)
	}
	ctx := context.Background()
	res, err := b.Retriever.Retrieve(ctx, queries[0], retrieve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.DocID == "rollout.md" {
			t.Errorf("new bundle answers from a document it does not hold: %+v", r)
		}
	}
	// A reader that opened the old bundle keeps answering from it.
	want, _ := ixA.Retriever().Retrieve(ctx, queries[0], retrieve.Options{})
	got, err := old.Retriever.Retrieve(ctx, queries[0], retrieve.Options{})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("old reader after replace: %+v, %v; want %+v", got, err, want)
	}
}

func TestSaveReplaceIsAtomicForReaders(t *testing.T) {
	root := t.TempDir()
	// Only an atomic exchange of directories closes the window in which
	// dir is missing; without one (not Linux, or a file system without
	// RENAME_EXCHANGE) Save moves the old bundle aside first.
	a, b := filepath.Join(root, "probe-a"), filepath.Join(root, "probe-b")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	if err := exchange(a, b); err != nil {
		t.Skipf("no atomic directory exchange here: %v", err)
	}
	os.Remove(a)
	os.Remove(b)
	dir := filepath.Join(root, "index")
	docs := corpus()
	saved(t, dir, docs, "rev-0")
	ix := buildIndex(t, docs)

	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads, failures atomic.Int64
	var firstErr atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			m, err := ReadManifest(dir)
			reads.Add(1)
			if err == nil && !strings.HasPrefix(m.Revision, "rev-") {
				err = os.ErrInvalid
			}
			if err != nil {
				failures.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
			}
		}
	}()
	for i := range 15 {
		if _, err := save(dir, ix, manifestFor(docs, "rev-"+string(rune('a'+i))), true); err != nil {
			t.Errorf("Save %d: %v", i, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if failures.Load() > 0 {
		t.Errorf("%d of %d reads during replaces failed; first: %v", failures.Load(), reads.Load(), firstErr.Load())
	}
	if m, err := ReadManifest(dir); err != nil || m.Revision != "rev-o" {
		t.Errorf("after the replaces: %+v, %v", m, err)
	}
	if got := entries(t, root); !reflect.DeepEqual(got, []string{"index"}) {
		t.Errorf("beside the bundle: %v", got)
	}
}

func TestSaveReplaceRefusesNonBundle(t *testing.T) {
	tests := []struct {
		name  string
		setup func(dir string)
		want  string // "" when the replace must succeed
	}{
		{"folder of documents", func(dir string) {
			os.Mkdir(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "notes.md"), []byte("mine"), 0o644)
		}, "not a parentrag index"},
		{"file", func(dir string) { os.WriteFile(dir, []byte("mine"), 0o644) }, "not a directory"},
		{"empty folder", func(dir string) { os.Mkdir(dir, 0o755) }, ""},
		{"bundle of another format", func(dir string) {
			os.Mkdir(dir, 0o755)
			os.WriteFile(filepath.Join(dir, ManifestFile), []byte(`{"formatVersion": 99}`), 0o644)
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "out")
			tt.setup(dir)
			before := entries(t, root)
			docs := corpus()
			_, err := save(dir, buildIndex(t, docs), manifestFor(docs, "rev-x"), true)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("save: %v", err)
				}
				open(t, dir)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Save = %v, want an error containing %q", err, tt.want)
			}
			if got := entries(t, root); !reflect.DeepEqual(got, before) {
				t.Errorf("folder changed from %v to %v", before, got)
			}
			if data, err := os.ReadFile(dir); err == nil && string(data) != "mine" {
				t.Errorf("file now holds %q", data)
			}
			if data, err := os.ReadFile(filepath.Join(dir, "notes.md")); err == nil && string(data) != "mine" {
				t.Errorf("document now holds %q", data)
			}
		})
	}
}

func TestSaveFailureLeavesNothing(t *testing.T) {
	docs := corpus()
	tests := []struct {
		name   string
		break_ func(ix *indexer.Index, m *Manifest)
		want   string
	}{
		// A manifest that cannot be encoded fails at the very last step,
		// after everything else was written.
		{"manifest not encodable", func(_ *indexer.Index, m *Manifest) { m.Embedder.ContextWeight = math.NaN() }, "writing manifest"},
		// An embedder that was never fitted has no statistics to write.
		{"embedder statistics", func(ix *indexer.Index, _ *Manifest) {
			lex, _ := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
			ix.Embedder = lex
		}, "lexical statistics"},
	}
	for _, tt := range tests {
		for _, replace := range []bool{false, true} {
			name := tt.name
			if replace {
				name += " over an old bundle"
			}
			t.Run(name, func(t *testing.T) {
				root := t.TempDir()
				dir := filepath.Join(root, "index")
				if replace {
					saved(t, dir, docs, "rev-old")
				}
				ix, m := buildIndex(t, docs), manifestFor(docs, "rev-new")
				tt.break_(ix, &m)
				if _, err := save(dir, ix, m, replace); err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Save = %v, want an error containing %q", err, tt.want)
				}
				want := []string(nil)
				if replace {
					want = []string{"index"}
				}
				if got := entries(t, root); !reflect.DeepEqual(got, want) {
					t.Errorf("left behind: %v, want %v", got, want)
				}
				if replace {
					b := open(t, dir)
					if b.Manifest.Revision != "rev-old" {
						t.Errorf("old bundle now has revision %q", b.Manifest.Revision)
					}
					if res, err := b.Retriever.Retrieve(context.Background(), queries[1], retrieve.Options{}); err != nil || len(res) == 0 {
						t.Errorf("old bundle does not answer: %v, %v", res, err)
					}
				}
			})
		}
	}
}

// editManifest rewrites fields of the manifest in dir.
func editManifest(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A bundle written before files were recorded opens unverified; one with
// its files recorded lists every file but the manifest.
func TestOpenVerifiesRecordedFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	_, m := saved(t, dir, corpus(), "rev")
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
		if f.Size <= 0 || len(f.SHA256) != 64 {
			t.Errorf("file %+v: want its size and sha256", f)
		}
	}
	for _, want := range []string{parentstore.DataFile, parentstore.IndexFile, LexicalFile} {
		if !slices.Contains(paths, want) {
			t.Errorf("manifest files %v lack %s", paths, want)
		}
	}
	if slices.Contains(paths, ManifestFile) {
		t.Errorf("manifest files %v list the manifest itself", paths)
	}
	editManifest(t, dir, func(m map[string]any) { delete(m, "files") })
	b, err := Open(dir)
	if err != nil {
		t.Fatalf("a bundle without recorded files: %v", err)
	}
	b.Close()
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(t *testing.T, dir string)
		want   []string
	}{
		{"no manifest", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, ManifestFile)) },
			[]string{"not a complete parentrag index", ManifestFile}},
		{"missing directory", func(t *testing.T, dir string) { os.RemoveAll(dir) },
			[]string{"not a complete parentrag index"}},
		{"corrupt manifest", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ManifestFile), []byte("{not json"), 0o644)
		}, []string{"corrupt manifest"}},
		{"newer format", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["formatVersion"] = 2 })
		}, []string{"index format 2", "reads 1", "rebuild the index"}},
		{"no format", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { delete(m, "formatVersion") })
		}, []string{"index format 0", "rebuild the index"}},
		{"children count", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["children"] = m["children"].(float64) + 1 })
		}, []string{"child index holds", "manifest says"}},
		{"parents count", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["parents"] = m["parents"].(float64) - 1 })
		}, []string{"parent store holds", "manifest says"}},
		{"unknown embedder", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["embedder"] = map[string]any{"kind": "mystery"} })
		}, []string{`unknown embedder kind "mystery"`}},
		{"missing lexical statistics", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, LexicalFile)) },
			[]string{"lexical.stats is missing"}},
		{"corrupt lexical statistics", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, LexicalFile), []byte("PRLX garbage"), 0o644)
		}, nil},
		{"missing child index", func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, ChildrenDir)) },
			[]string{"children/", "is missing"}},
		{"truncated parents", func(t *testing.T, dir string) {
			p := filepath.Join(dir, parentstore.DataFile)
			info, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, info.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, []string{parentstore.DataFile, "bytes, the manifest says", "truncated"}},
		{"changed parents", func(t *testing.T, dir string) {
			p := filepath.Join(dir, parentstore.DataFile)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			copy(data[len(data)/2:], "XXXX")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{parentstore.DataFile, "sha256", "changed since it was written"}},
		{"path outside", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) {
				m["files"] = append(m["files"].([]any), map[string]any{"path": "../x", "size": 1, "sha256": "00"})
			})
		}, []string{`"../x"`, "not a path inside the bundle"}},
	}
	docs := corpus()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			saved(t, dir, docs, "rev")
			tt.break_(t, dir)
			b, err := Open(dir)
			if err == nil {
				b.Close()
				t.Fatal("Open succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the bundle", err)
			}
		})
	}
}

// Close releases the mapped child index: a query after Close fails with
// index.ErrClosed instead of reading unmapped memory.
func TestCloseReleasesChildIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	saved(t, dir, corpus(), "rev-a")
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	children, ok := b.Retriever.Children.(*embedded.Store)
	if !ok {
		t.Fatalf("children are a %T, want the embedded store", b.Retriever.Children)
	}
	if runtime.GOOS == "linux" && !children.Mapped() {
		t.Fatal("the child index is not mapped from its file")
	}
	ctx := context.Background()
	if _, err := b.Retriever.Retrieve(ctx, queries[0], retrieve.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Retriever.Retrieve(ctx, queries[0], retrieve.Options{}); !errors.Is(err, index.ErrClosed) {
		t.Fatalf("retrieve after Close: %v, want ErrClosed", err)
	}
}
