package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/rollout"
)

func TestEmbeddingCacheReembedsOnlyNewChildren(t *testing.T) {
	model := embeddingServer(t)
	texts := &model.Texts
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	// Enough children that re-embedding them all would show.
	docs := sampleDocs()
	for _, topic := range []string{"glaciers", "comets", "honeybees", "printing presses", "lighthouses", "violins"} {
		docs = append(docs, v1alpha1.InlineDocument{ID: topic, Title: topic, Text: strings.Repeat("The "+topic+" chapter says how "+topic+" began and changed over the years.\n\n", 12)})
	}
	c := inlineCorpus(ns, p.Name, docs...)
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
	if u := first.UnitCache; u == nil || u.Reused != 0 || u.Split != len(docs) {
		t.Fatalf("first build's unit cache %+v, want every one of %d documents split", u, len(docs))
	}
	before := texts.Load()
	// One document gains a paragraph: only its changed children are new.
	get(t, c)
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.Sources[0].Inline[2].Text += "\n\nA new paragraph about sourdough starters and rye flour.\n"
	if err := k8s.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the second revision", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision.Name != first.Revision && c.Status.LastBuild.Revision == c.Status.ActiveRevision.Name, nil
	})
	second := c.Status.LastBuild.EmbeddingCache
	sent := texts.Load() - before
	children := int64(c.Status.ActiveRevision.Children)
	// Besides the new children, the model embeds the verification's sample
	// queries: at most two per sampled parent.
	queries := int64(2 * rollout.DefaultSamples)
	if second == nil || second.Hits == 0 || second.Misses == 0 || second.Hits+second.Misses != children || sent < second.Misses || sent > second.Misses+queries {
		t.Fatalf("second build cache %+v: %d texts sent (at most %d sample queries), %d children", second, sent, queries, children)
	}
	// Only the edited document is split again.
	if u := c.Status.LastBuild.UnitCache; u == nil || u.Reused != len(docs)-1 || u.Split != 1 {
		t.Fatalf("second build's unit cache %+v, want %d documents reused and 1 split", u, len(docs)-1)
	}
	t.Logf("second build: %d hits, %d misses, hit rate %s; %d texts sent to the model", second.Hits, second.Misses, second.HitRate, sent)
}
