package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/embedtest"
	"github.com/parentrag/parentrag/internal/milvustest"
)

// milvusCorpus is a Corpus whose children go to the Milvus at addr.
func milvusCorpus(ns, policy, addr string) *v1alpha1.Corpus {
	c := inlineCorpus(ns, policy, sampleDocs()...)
	c.Spec.VectorStore = &v1alpha1.VectorStore{Milvus: &v1alpha1.MilvusVectorStore{Address: addr}}
	return c
}

func TestMilvusCollectionsFollowRevisions(t *testing.T) {
	srv := milvustest.Start(t)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := milvusCorpus(ns, p.Name, srv.Addr())
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	first := c.Status.ActiveRevision
	firstColl := c.MilvusCollection(first.Name)
	if n := srv.RowCount(firstColl); n != first.Children {
		t.Fatalf("collection %s holds %d rows, the revision has %d children", firstColl, n, first.Children)
	}
	if inv := c.Status.Inventory; inv == nil || len(inv.Collections) != 1 || inv.Alias == nil || inv.Alias.Collection != firstColl {
		t.Fatalf("inventory %+v, want the collection and the alias on it", c.Status.Inventory)
	}
	if srv.Aliases()[c.MilvusAlias()] != firstColl {
		t.Fatalf("alias %s points at %q, want %s", c.MilvusAlias(), srv.Aliases()[c.MilvusAlias()], firstColl)
	}
	// Two policy changes: the alias follows, retention keeps two collections.
	var colls []string
	for _, child := range []int{120, 90} {
		prev := c.Status.ActiveRevision.Name
		get(t, p)
		p.Spec.Child = &v1alpha1.ChunkSize{ChunkSize: child}
		if err := k8s.Update(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "a new revision with the alias on it", func() (bool, error) {
			get(t, c)
			a := c.Status.ActiveRevision
			return a.Name != prev && srv.Aliases()[c.MilvusAlias()] == c.MilvusCollection(a.Name), nil
		})
		colls = append(colls, c.MilvusCollection(c.Status.ActiveRevision.Name))
	}
	eventually(t, 30*time.Second, "the oldest collection to be dropped", func() (bool, error) {
		have := strings.Join(srv.Collections(), ",")
		return !strings.Contains(have, firstColl) && strings.Contains(have, colls[0]) && strings.Contains(have, colls[1]), nil
	})
	// Deleting the Corpus (deletionPolicy Delete) drops the alias and the collections.
	if err := k8s.Delete(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the collections and the alias to go", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)
		_, aliased := srv.Aliases()[c.MilvusAlias()]
		return apierrors.IsNotFound(err) && len(srv.Collections()) == 0 && !aliased, err
	})
}

func TestMilvusOutageKeepsTheActiveRevisionServing(t *testing.T) {
	t.Parallel()
	srv := milvustest.Start(t)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := milvusCorpus(ns, p.Name, srv.Addr())
	c.Spec.DeletionPolicy = v1alpha1.DeletionRetain
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	active := c.Status.ActiveRevision.Name
	srv.SetUnavailable(true)
	get(t, p)
	p.Spec.Child = &v1alpha1.ChunkSize{ChunkSize: 100}
	if err := k8s.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	eventually(t, 180*time.Second, "the build to fail visibly", func() (bool, error) {
		get(t, c)
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonIndexFailed && strings.Contains(ready.Message, active+" keeps serving"), fmt.Errorf("Ready %+v", ready)
	})
	if c.Status.ActiveRevision.Name != active {
		t.Fatalf("active revision moved to %s during the outage", c.Status.ActiveRevision.Name)
	}
	srv.SetUnavailable(false)
	eventually(t, 120*time.Second, "recovery once Milvus is back", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision.Name != active && meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady), nil
	})
	// deletionPolicy Retain leaves the collections for someone else.
	if err := k8s.Delete(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Corpus to go", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)
		return apierrors.IsNotFound(err), err
	})
	if len(srv.Collections()) == 0 {
		t.Fatal("deletionPolicy Retain dropped the collections")
	}
}

// embeddingServer answers OpenAI /v1/embeddings requests with 8-dimension
// vectors derived from each input's letters.
func embeddingServer(t *testing.T) *embedtest.Server {
	return embedtest.Start(t, embedtest.Options{Model: "letters", Embed: letterVector})
}

// letterVector counts a text's letters into 8 buckets; never the zero
// vector.
func letterVector(text string) []float32 {
	v := make([]float32, 8)
	for _, r := range strings.ToLower(text) {
		if r >= 'a' && r <= 'z' {
			v[(r-'a')%8]++
		}
	}
	v[0]++
	return v
}

func TestMilvusWithAnEmbeddingModelIndexesBothFields(t *testing.T) {
	srv := milvustest.Start(t)
	model := embeddingServer(t)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := milvusCorpus(ns, p.Name, srv.Addr())
	c.Spec.Embedding = &v1alpha1.Embedding{OpenAI: &v1alpha1.OpenAIEmbedding{Endpoint: model.URL, Model: "letters"}}
	err := k8s.Create(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "embedding.openAI.dimensions is required with vectorStore.milvus") {
		t.Fatalf("a Milvus Corpus without dimensions: %v", err)
	}
	c.Spec.Embedding.OpenAI.Dimensions = 8
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	coll := c.MilvusCollection(c.Status.ActiveRevision.Name)
	if srv.RowCount(coll) != c.Status.ActiveRevision.Children {
		t.Fatalf("collection %s holds %d rows, want %d", coll, srv.RowCount(coll), c.Status.ActiveRevision.Children)
	}
	if len(srv.IndexParams(coll, "dense")) == 0 || len(srv.IndexParams(coll, "sparse")) == 0 {
		t.Fatalf("collection %s lacks an index on the dense or the sparse field", coll)
	}
}
