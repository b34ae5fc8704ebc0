package controllers_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/retrieval"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// TestSegmentsLayoutBuildsAndServesSegments: a Corpus whose embedded
// child index has the Segments layout gets revisions of segments, which
// open from their ConfigMaps and answer a query; an edit builds a new
// one. The same layout with an embedding endpoint is refused at apply.
func TestSegmentsLayoutBuildsAndServesSegments(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	c.Spec.VectorStore = &v1alpha1.VectorStore{Embedded: &v1alpha1.EmbeddedVectorStore{Layout: v1alpha1.LayoutSegments}}
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	first := c.Status.ActiveRevision.Name
	b := openActive(t, c)
	if kind := b.Manifest.VectorStore.Kind; kind != bundle.VectorStoreSegments || len(b.Manifest.VectorStore.Segments) == 0 {
		t.Fatalf("the active revision's children are %+v, want segments", b.Manifest.VectorStore)
	}
	checkSegmentRuns(t, c, len(b.Manifest.VectorStore.Segments), 0)
	results, err := b.Retriever.Retrieve(ctx, c.Spec.Sources[0].Inline[0].Title, retrieval.Options{})
	if err != nil || len(results) == 0 {
		t.Fatalf("a query of the first document's title: %d results, error %v", len(results), err)
	}
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.Sources[0].Inline[1].Text += "\n\nA new paragraph about zebras and their stripes.\n"
	if err := k8s.Patch(ctx, c, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the edited revision", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision != nil && c.Status.ActiveRevision.Name != first, nil
	})
	edited := openActive(t, c)
	if results, err := edited.Retriever.Retrieve(ctx, "zebras stripes", retrieval.Options{}); err != nil || len(results) == 0 || results[0].DocID != c.Spec.Sources[0].Inline[1].ID {
		t.Fatalf("the edited revision found %+v (error %v) for zebras", results, err)
	}
	checkSegmentRuns(t, c, len(edited.Manifest.VectorStore.Segments), 1)

	refused := inlineCorpus(ns, p.Name, sampleDocs()...)
	refused.Name = "segments-with-a-model"
	refused.Spec.VectorStore = c.Spec.VectorStore
	refused.Spec.Embedding = &v1alpha1.Embedding{OpenAI: &v1alpha1.OpenAIEmbedding{Endpoint: "http://model.example/v1", Model: "m"}}
	err = k8s.Create(ctx, refused)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "cannot hold the vectors of embedding.openAI") {
		t.Fatalf("segments with an embedding endpoint: error %v, want Invalid saying why", err)
	}
}

// checkSegmentRuns fails unless the last build of c, that of its active
// revision, counts one run for each of its segments and built at least
// minBuilt of them.
func checkSegmentRuns(t *testing.T, c *v1alpha1.Corpus, segments, minBuilt int) {
	t.Helper()
	b := c.Status.LastBuild
	if b == nil || b.Revision != c.Status.ActiveRevision.Name || b.UnitCache == nil || b.UnitCache.Segments == nil {
		t.Fatalf("the last build %+v says nothing of the runs of revision %s", b, c.Status.ActiveRevision.Name)
	}
	if runs := b.UnitCache.Segments; runs.Reused+runs.Built != segments || runs.Built < minBuilt {
		t.Fatalf("lastBuild.unitCache.segments %+v for %d segments; want them all counted, at least %d built", *runs, segments, minBuilt)
	}
}

// openActive unpacks the active revision of c from its ConfigMaps and
// opens it, closed when the test ends.
func openActive(t *testing.T, c *v1alpha1.Corpus) *bundle.Bundle {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	rev := c.Status.ActiveRevision.Name
	if _, err := cmbundle.Unpack(context.Background(), k8s, c.Namespace, c.RevisionObjectName(rev), dir); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
