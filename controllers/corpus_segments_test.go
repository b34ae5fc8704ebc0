package controllers_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
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
	b := openActive(t, c)
	if kind := b.Manifest.VectorStore.Kind; kind != bundle.VectorStoreSegments || len(b.Manifest.VectorStore.Segments) == 0 {
		t.Fatalf("the active revision's children are %+v, want segments", b.Manifest.VectorStore)
	}
	checkSegmentRuns(t, c, len(b.Manifest.VectorStore.Segments), 0)
	results, err := b.Retriever.Retrieve(ctx, c.Spec.Sources[0].Inline[0].Title, retrieve.Options{})
	if err != nil || len(results) == 0 {
		t.Fatalf("a query of the first document's title: %d results, error %v", len(results), err)
	}
	addZebras(t, c, 1)
	edited := openActive(t, c)
	if results, err := edited.Retriever.Retrieve(ctx, "zebras stripes", retrieve.Options{}); err != nil || len(results) == 0 || results[0].DocID != c.Spec.Sources[0].Inline[1].ID {
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

// TestSegmentsRevisionsShareShards: an edit of one document of a Corpus
// of segments stores the shards of the segment it changed and the new
// manifest; every other segment's shards are the previous revision's
// ConfigMaps, shared. Once the previous revision is past retention, the
// shards no stored revision names any more are deleted, and the active
// revision still unpacks from what is left.
func TestSegmentsRevisionsShareShards(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, threeRuns()...)
	c.Spec.VectorStore = &v1alpha1.VectorStore{Embedded: &v1alpha1.EmbeddedVectorStore{Layout: v1alpha1.LayoutSegments}}
	c.Spec.RetainRevisions = 1
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	first := c.Status.ActiveRevision.Name
	if segments := len(openActive(t, c).Manifest.VectorStore.Segments); segments != 3 {
		t.Fatalf("the revision has %d segments, want one a run: 3", segments)
	}
	stored := c.Status.LastBuild.ConfigMaps
	if stored == nil || stored.Reused != 0 || stored.Created < 4 {
		t.Fatalf("the first build's lastBuild.configMaps %+v, want every ConfigMap created: 3 segments' shards and a manifest", stored)
	}
	before := sharedShardNames(t, c)

	addZebras(t, c, 4)
	stored = c.Status.LastBuild.ConfigMaps
	if stored == nil || stored.Reused < 2 || stored.Created < 2 || stored.Created >= len(before)+1 {
		t.Fatalf("the edit's lastBuild.configMaps %+v (the first revision had %d shared shards), want the two unchanged segments' reused and the edited one's created", stored, len(before))
	}
	edited := openActive(t, c)
	if results, err := edited.Retriever.Retrieve(ctx, "zebras stripes", retrieve.Options{}); err != nil || len(results) == 0 || results[0].DocID != c.Spec.Sources[0].Inline[4].ID {
		t.Fatalf("the edited revision found %+v (error %v) for zebras", results, err)
	}
	var manifest corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.RevisionObjectName(c.Status.ActiveRevision.Name)}, &manifest); err != nil {
		t.Fatal(err)
	}
	names, err := cmbundle.Names(&manifest)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(names[:len(names)-1]))
	eventually(t, 30*time.Second, "the previous revision's unshared shard deleted", func() (bool, error) {
		return slices.Equal(sharedShardNames(t, c), want) && len(revisionConfigMaps(t, c, first)) == 0, nil
	})
	kept := 0
	for _, n := range before {
		if slices.Contains(want, n) {
			kept++
		}
	}
	if kept != stored.Reused {
		t.Fatalf("%d of the first revision's shards are still stored, the edit's build reused %d", kept, stored.Reused)
	}
	openActive(t, c)
}

// addZebras appends a paragraph about zebras to the doc-th inline
// document of c and waits until the revision built from the edit is
// active and was c's last build.
func addZebras(t *testing.T, c *v1alpha1.Corpus, doc int) {
	t.Helper()
	before := c.Status.ActiveRevision.Name
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.Sources[0].Inline[doc].Text += "\n\nA new paragraph about zebras and their stripes.\n"
	if err := k8s.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the edited revision", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision != nil && c.Status.ActiveRevision.Name != before && c.Status.LastBuild != nil && c.Status.LastBuild.Revision == c.Status.ActiveRevision.Name, nil
	})
}

// threeRuns are documents a build into segments cuts into three runs of
// three: the third, sixth and ninth documents' ids end runs.
func threeRuns() []v1alpha1.InlineDocument {
	topics := []string{"magma", "tides", "yeast", "glaciers", "comets", "coral", "orchids", "falcons", "granite"}
	docs := make([]v1alpha1.InlineDocument, len(topics))
	for i, topic := range topics {
		docs[i] = v1alpha1.InlineDocument{ID: fmt.Sprintf("run%d-doc%d", i/3, i%3), Title: topic,
			Text: strings.Repeat(fmt.Sprintf("A paragraph about %s and how %s changes over the years.\n\n", topic, topic), 6)}
		if i%3 == 2 {
			docs[i].ID = bundletest.RunEndingID(fmt.Sprintf("run%d-end", i/3))
		}
	}
	return docs
}

// sharedShardNames lists, sorted, the shared shard ConfigMaps of c.
func sharedShardNames(t *testing.T, c *v1alpha1.Corpus) []string {
	t.Helper()
	var list corev1.ConfigMapList
	sel := client.MatchingLabelsSelector{Selector: cmbundle.SharedShardSelector(c.Name)}
	if err := k8s.List(context.Background(), &list, client.InNamespace(c.Namespace), sel); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		names = append(names, cm.Name)
	}
	slices.Sort(names)
	return names
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
