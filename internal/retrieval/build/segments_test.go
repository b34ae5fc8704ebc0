package build_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/eval/evaltest"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// segments keeps a bundle's children as segments.
var segments = bundle.VectorStoreRef{Kind: bundle.VectorStoreSegments}

// TestSegmentBundleRetrievesAsTheEmbeddedOnSquad builds the SQuAD v1.1
// dev articles twice, into the embedded store and into segments, and
// checks that both bundles open with the same counts and give every
// question the same results: parents, scores to the bit, matched
// children and texts; then that a build after an edit, with a warm
// segment cache, writes the bundle a build from scratch writes.
func TestSegmentBundleRetrievesAsTheEmbeddedOnSquad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and searches SQuAD twice; skipped with -short")
	}
	corpus, questions, err := evaltest.LoadSet(sharedtest.Dir(t, "eval", "squad-v1.1-dev"), "articles.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	spec := defaultPolicy(t)
	embeddedDir, _ := cachedBuild(t, corpus.Docs, spec, "")
	segmentDir, _ := buildInto(t, corpus.Docs, spec, "", segments)
	want, got := openBundle(t, embeddedDir), openBundle(t, segmentDir)
	if got.Manifest.VectorStore.Kind != bundle.VectorStoreSegments || len(got.Manifest.VectorStore.Segments) == 0 {
		t.Fatalf("the manifest's child index is %+v, want segments", got.Manifest.VectorStore)
	}
	if got.Manifest.Children != want.Manifest.Children || got.Manifest.Parents != want.Manifest.Parents {
		t.Fatalf("%d children and %d parents, want %d and %d", got.Manifest.Children, got.Manifest.Parents, want.Manifest.Children, want.Manifest.Parents)
	}
	ctx := context.Background()
	for _, q := range questions {
		w, err := want.Retriever.Retrieve(ctx, q.Text, retrieve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		g, err := got.Retriever.Retrieve(ctx, q.Text, retrieve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("question %s %q:\n segments %+v\n embedded %+v", q.ID, q.Text, g, w)
		}
		sameFilteredHits(t, q.Text, got, want)
	}
	t.Logf("%d questions, %d children in %d segments", len(questions), got.Manifest.Children, len(got.Manifest.VectorStore.Segments))
	cache := t.TempDir()
	buildInto(t, corpus.Docs, spec, cache, segments)
	edited := clone(corpus.Docs)
	edited[10].Text += "\n\nThe article was edited."
	warm, _ := buildInto(t, edited, spec, cache, segments)
	cold, _ := buildInto(t, edited, spec, "", segments)
	sameBundles(t, cold, warm)
}

// sameFilteredHits fails unless the child indexes of bundles got and want
// give question the same 20 best children among those of documents whose
// id has an even length: ids, parents and scores to the bit.
func sameFilteredHits(t *testing.T, question string, got, want *bundle.Bundle) {
	t.Helper()
	ctx := context.Background()
	evenDocs := func(h index.Hit) bool { return len(h.DocID)%2 == 0 }
	var hits [2][]index.Hit
	for i, b := range []*bundle.Bundle{got, want} {
		q, err := b.Retriever.Embedder.EmbedQuery(ctx, question)
		if err != nil {
			t.Fatal(err)
		}
		if hits[i], err = b.Retriever.Children.SearchFiltered(ctx, index.SearchRequest{Vector: q, TopK: 20}, evenDocs); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(hits[0], hits[1]) {
		t.Fatalf("question %q, filtered by document:\n segments %+v\n embedded %+v", question, hits[0], hits[1])
	}
}

// docIDs lists the document of each result.
func docIDs(results []retrieve.Result) []string {
	ids := make([]string, len(results))
	for i, r := range results {
		ids[i] = r.DocID
	}
	return ids
}

// openBundle opens the bundle in dir, closed when the test ends.
func openBundle(t *testing.T, dir string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestSegmentBundlesAfterEdits checks that after each kind of edit a
// segments build with a warm unit cache writes exactly the bundle of a
// build from scratch, and that it opens and finds the edited text.
func TestSegmentBundlesAfterEdits(t *testing.T) {
	base := synthtest.New(3, 5000).Documents(40)
	spec := defaultPolicy(t)
	edits := []struct {
		name, query, wantDoc string // the edit, and a query that finds what it changed
		edit                 func([]hierarchy.Document) []hierarchy.Document
	}{
		{"add", "zebras", "doc-new", func(d []hierarchy.Document) []hierarchy.Document {
			return append(d, hierarchy.Document{ID: "doc-new", Title: "Zebras", Text: "Zebras graze on the open savanna."})
		}},
		{"edit", "zebras", base[7].ID, func(d []hierarchy.Document) []hierarchy.Document {
			d[7].Text += "\n\nOne more sentence about zebras."
			return d
		}},
		{"delete", base[3].Title, "", func(d []hierarchy.Document) []hierarchy.Document { return slices.Delete(d, 3, 4) }},
		{"rename", base[5].Title, "doc-renamed", func(d []hierarchy.Document) []hierarchy.Document { d[5].ID = "doc-renamed"; return d }},
	}
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			buildInto(t, base, spec, cache, segments)
			docs := tt.edit(clone(base))
			warm, _ := buildInto(t, docs, spec, cache, segments)
			cold, _ := buildInto(t, docs, spec, "", segments)
			sameBundles(t, cold, warm)
			b := openBundle(t, warm)
			if b.Manifest.Documents != len(docs) {
				t.Fatalf("%d documents, want %d", b.Manifest.Documents, len(docs))
			}
			if len(readTree(t, filepath.Join(warm, bundle.ChildrenDir, bundle.SegmentsDir))) != len(b.Manifest.VectorStore.Segments) {
				t.Fatalf("the segments directory holds other files than the manifest's %v", b.Manifest.VectorStore.Segments)
			}
			results, err := b.Retriever.Retrieve(context.Background(), tt.query, retrieve.Options{})
			if err != nil {
				t.Fatal(err)
			}
			found := slices.ContainsFunc(results, func(r retrieve.Result) bool { return r.DocID == tt.wantDoc })
			gone := !slices.ContainsFunc(results, func(r retrieve.Result) bool { return r.DocID == base[3].ID })
			if tt.wantDoc != "" && !found || tt.name == "delete" && !gone {
				t.Fatalf("%q found %d parents, of documents %v", tt.query, len(results), docIDs(results))
			}
		})
	}
}

// TestSegmentRunsReusedAfterAnEdit checks, on a corpus of several runs,
// that a build after one edit takes every run the edit left alone from
// the segment cache, neither split nor read, and still writes the
// bundle of a build from scratch.
func TestSegmentRunsReusedAfterAnEdit(t *testing.T) {
	docs := make([]hierarchy.Document, 12000)
	for i := range docs {
		docs[i] = hierarchy.Document{ID: fmt.Sprintf("doc-%05d", i), Text: fmt.Sprintf("Note %d on the herd seen at waterhole %d.", i, i%97)}
	}
	spec := defaultPolicy(t)
	cache := t.TempDir()
	first, _ := buildInto(t, docs, spec, cache, segments)
	runs := openBundle(t, first).Manifest.VectorStore.Segments
	if len(runs) < 2 {
		t.Fatalf("%d runs of %d documents; the test needs several", len(runs), len(docs))
	}
	docs[5000].Text = "Zebras drank at dawn."
	warm, built := buildRuns(t, docs, spec, cache, segments)
	reused := built.Reused
	if *built.Runs != (build.Runs{Reused: len(runs) - 1, Built: 1}) {
		t.Fatalf("runs counted %+v after one edit of %d runs; want all but one reused", *built.Runs, len(runs))
	}
	cold, _ := buildInto(t, docs, spec, "", segments)
	sameBundles(t, cold, warm)
	after := openBundle(t, warm).Manifest.VectorStore.Segments
	kept := 0
	for _, name := range after {
		if slices.Contains(runs, name) {
			kept++
		}
	}
	if kept != len(after)-1 || reused == 0 || reused >= len(docs) {
		t.Fatalf("%d of %d runs kept and %d of %d documents reused; want all runs but one kept", kept, len(after), reused, len(docs))
	}
	t.Logf("%d runs; the edit rebuilt one and reused %d of %d documents", len(after), reused, len(docs))
}

// TestSegmentBundleRefusesDamage checks that a bundle of segments with a
// damaged segment, or a manifest naming a segment outside the bundle,
// does not open.
func TestSegmentBundleRefusesDamage(t *testing.T) {
	dir, _ := buildInto(t, docs(), defaultPolicy(t), "", segments)
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, filepath.FromSlash(bundle.SegmentFile(strings.TrimSuffix(m.VectorStore.Segments[0], bundle.SegmentExt))))
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Open(dir); !errors.Is(err, bundle.ErrCorrupt) {
		t.Fatalf("a damaged segment: error %v, want ErrCorrupt", err)
	}
	m.VectorStore.Segments = []string{"../../elsewhere.seg"}
	m.Files = nil // opened unverified, as a bundle written before checksums is
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bundle.ManifestFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Open(dir); err == nil || !strings.Contains(err.Error(), "is not a segment's file name") {
		t.Fatalf("a segment outside the bundle: error %v", err)
	}
}
