package controllers_test

import (
	"context"
	"testing"
	"time"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

func TestEmbeddingCacheReembedsOnlyNewChildren(t *testing.T) {
	model, texts := countingEmbeddingServer(t)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	c.Spec.Embedding = &v1alpha1.Embedding{OpenAI: &v1alpha1.OpenAIEmbedding{Endpoint: model.URL, Model: "letters"}}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	first := c.Status.LastBuild
	// Every child is new to the cache; a text repeated within the build
	// is embedded once and counts as a hit.
	if first == nil || first.EmbeddingCache == nil || first.EmbeddingCache.Misses == 0 ||
		first.EmbeddingCache.Hits+first.EmbeddingCache.Misses != int64(c.Status.ActiveRevision.Children) {
		t.Fatalf("first build %+v (cache %+v), %d children", first, first.EmbeddingCache, c.Status.ActiveRevision.Children)
	}
	// Sample queries of the verification are embedded too: what the first
	// build sent beyond its children.
	queries := texts.Load() - first.EmbeddingCache.Misses
	before := texts.Load()
	// One document gains a paragraph: only its changed children are new.
	get(t, c)
	c.Spec.Sources[0].Inline[2].Text += "\n\nA new paragraph about sourdough starters and rye flour.\n"
	if err := k8s.Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the second revision", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision.Name != first.Revision && c.Status.LastBuild.Revision == c.Status.ActiveRevision.Name, nil
	})
	second := c.Status.LastBuild.EmbeddingCache
	sent := texts.Load() - before
	children := int64(c.Status.ActiveRevision.Children)
	if second == nil || second.Hits == 0 || second.Misses == 0 || second.Hits+second.Misses != children || sent < second.Misses || sent > second.Misses+queries {
		t.Fatalf("second build cache %+v: %d texts sent (%d are sample queries), %d children", second, sent, queries, children)
	}
	t.Logf("second build: %d hits, %d misses, hit rate %s; %d texts sent to the model", second.Hits, second.Misses, second.HitRate, sent)
}
