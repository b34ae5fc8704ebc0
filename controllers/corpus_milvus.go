package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// Keys of a Milvus credentials Secret.
const (
	milvusTokenKey    = "token"
	milvusUsernameKey = "username"
	milvusPasswordKey = "password"
)

// milvusRef locates the collection of a revision; it carries no
// credentials.
func milvusRef(c *v1alpha1.Corpus, revision string, dense int) bundle.VectorStoreRef {
	m := c.Spec.VectorStore.Milvus
	ref := bundle.VectorStoreRef{
		Kind: bundle.VectorStoreMilvus, Address: m.Address, Database: m.Database, TLS: m.TLS,
		Collection: c.MilvusCollection(revision), Dense: dense, Metric: m.Metric, Consistency: m.Consistency,
	}
	if idx := m.Index; idx != nil {
		ref.Index, ref.HNSWM, ref.HNSWEfConstruction, ref.HNSWEf = idx.Type, idx.M, idx.EfConstruction, idx.Ef
	}
	return ref
}

// milvusConfig is the client configuration of a revision's collection,
// with the credentials of the Corpus's Secret.
func (r *CorpusReconciler) milvusConfig(ctx context.Context, c *v1alpha1.Corpus, ref bundle.VectorStoreRef) (milvus.Config, error) {
	cfg := bundle.MilvusConfig(ref)
	cfg.Token, cfg.Username, cfg.Password = "", "", ""
	if !c.UsesMilvus() {
		return cfg, nil
	}
	m := c.Spec.VectorStore.Milvus
	cfg.Shards = m.Shards
	if m.SecretRef == nil {
		return cfg, nil
	}
	var secret corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: m.SecretRef.Name}, &secret); err != nil {
		return cfg, fmt.Errorf("reading Milvus Secret %s: %w", m.SecretRef.Name, err)
	}
	cfg.Token = string(secret.Data[milvusTokenKey])
	cfg.Username, cfg.Password = string(secret.Data[milvusUsernameKey]), string(secret.Data[milvusPasswordKey])
	return cfg, nil
}

// collectionConfig records the revision's collection in the inventory (and
// publishes it, so a crash cannot leak it), then returns the client
// configuration the build creates it with.
func (r *CorpusReconciler) collectionConfig(ctx context.Context, s *corpusState, ref bundle.VectorStoreRef) (milvus.Config, error) {
	if err := r.recordCollection(s, ref); err != nil {
		return milvus.Config{}, err
	}
	return r.milvusConfig(ctx, s.corpus, ref)
}

// recordCollection adds the revision's collection to the inventory and
// publishes the status at once, before the collection can exist.
func (r *CorpusReconciler) recordCollection(s *corpusState, ref bundle.VectorStoreRef) error {
	inv := inventoryOf(s.corpus)
	if hasCollection(inv, ref.Collection) {
		return nil
	}
	inv.Collections = append(inv.Collections, v1alpha1.InventoryCollection{Name: ref.Collection, Revision: s.revision, Address: ref.Address, Database: ref.Database})
	return s.progress.flush()
}

// moveAlias points the Corpus's alias at the active revision's collection
// once every Retriever of the Corpus serves that revision, so readers
// outside parentrag switch together with the query pods.
func (r *CorpusReconciler) moveAlias(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	c := s.corpus
	if !c.UsesMilvus() {
		return ctrl.Result{}, nil
	}
	active := c.MilvusCollection(c.Status.ActiveRevision.Name)
	inv := inventoryOf(c)
	if inv.Alias != nil && inv.Alias.Collection == active {
		return ctrl.Result{}, nil
	}
	serving, err := r.retrieversServe(ctx, c, c.Status.ActiveRevision.Name)
	if err != nil || !serving {
		return ctrl.Result{}, err
	}
	m := c.Spec.VectorStore.Milvus
	store, err := r.connect(ctx, c, m.Address, m.Database, active)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer store.Close(ctx)
	if err := store.SetAlias(ctx, c.MilvusAlias()); err != nil {
		return ctrl.Result{}, fmt.Errorf("pointing alias %s at %s: %w", c.MilvusAlias(), active, err)
	}
	inv.Alias = &v1alpha1.InventoryAlias{Name: c.MilvusAlias(), Collection: active}
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "AliasMoved", "Promote", "alias %s now points at %s", c.MilvusAlias(), active)
	return ctrl.Result{}, nil
}

// retrieversServe reports whether every Retriever of the Corpus on the
// Active track serves the revision (true when there is none); previews of
// the candidate do not hold the alias back.
func (r *CorpusReconciler) retrieversServe(ctx context.Context, c *v1alpha1.Corpus, revision string) (bool, error) {
	var list v1alpha1.RetrieverList
	if err := r.List(ctx, &list, client.InNamespace(c.Namespace)); err != nil {
		return false, fmt.Errorf("listing Retrievers: %w", err)
	}
	for _, rt := range list.Items {
		if rt.Spec.CorpusRef.Name == c.Name && rt.GetTrack() == v1alpha1.TrackActive && rt.Status.ServingRevision != revision {
			return false, nil
		}
	}
	return true, nil
}

// connect opens an existing collection of the Corpus on the Milvus at
// address and database (those of the inventory, which outlive a change of
// the spec), with the credentials of the spec when it still names Milvus.
func (r *CorpusReconciler) connect(ctx context.Context, c *v1alpha1.Corpus, address, database, collection string) (*milvus.Store, error) {
	ref := bundle.VectorStoreRef{Kind: bundle.VectorStoreMilvus, Address: address, Database: database, Collection: collection}
	if c.UsesMilvus() {
		ref.TLS = c.Spec.VectorStore.Milvus.TLS
	}
	cfg, err := r.milvusConfig(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	store, err := milvus.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("milvus at %s: %w", ref.Address, err)
	}
	return store, nil
}

// dropCollections drops the inventoried collections keep does not accept,
// skipping the one the alias points at, and removes each dropped (or
// already missing) one from the inventory. A failed drop stays in the
// inventory and is retried.
func (r *CorpusReconciler) dropCollections(ctx context.Context, c *v1alpha1.Corpus, keep func(v1alpha1.InventoryCollection) bool) error {
	inv := inventoryOf(c)
	var kept []v1alpha1.InventoryCollection
	var errs []error
	for _, col := range inv.Collections {
		if keep(col) || (inv.Alias != nil && inv.Alias.Collection == col.Name) {
			kept = append(kept, col)
			continue
		}
		if err := r.dropCollection(ctx, c, col); err != nil {
			kept = append(kept, col)
			errs = append(errs, err)
			continue
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "CollectionDropped", "GarbageCollect", "dropped Milvus collection %s", col.Name)
	}
	inv.Collections = kept
	return errors.Join(errs...)
}

// dropCollection drops one collection; a missing one counts as dropped.
func (r *CorpusReconciler) dropCollection(ctx context.Context, c *v1alpha1.Corpus, col v1alpha1.InventoryCollection) error {
	store, err := r.connect(ctx, c, col.Address, col.Database, col.Name)
	if err != nil {
		return err
	}
	defer store.Close(ctx)
	if err := store.Drop(ctx); err != nil && !errors.Is(err, milvus.ErrNotFound) {
		return fmt.Errorf("dropping collection %s: %w", col.Name, err)
	}
	return nil
}

// releaseMilvus applies the deletion policy to a deleted Corpus's Milvus
// objects: Delete drops the alias and every collection, Retain leaves them.
func (r *CorpusReconciler) releaseMilvus(ctx context.Context, c *v1alpha1.Corpus) error {
	inv := c.Status.Inventory
	if inv == nil || c.GetDeletionPolicy() == v1alpha1.DeletionRetain {
		return nil
	}
	return r.dropAll(ctx, c)
}

// dropAll drops the alias and every inventoried collection.
func (r *CorpusReconciler) dropAll(ctx context.Context, c *v1alpha1.Corpus) error {
	inv := inventoryOf(c)
	if inv.Alias != nil {
		col := collectionEntry(inv, inv.Alias.Collection)
		store, err := r.connect(ctx, c, col.Address, col.Database, inv.Alias.Collection)
		if err != nil {
			return err
		}
		err = store.DropAlias(ctx, inv.Alias.Name)
		store.Close(ctx)
		if err != nil && !errors.Is(err, milvus.ErrNotFound) {
			return fmt.Errorf("dropping alias %s: %w", inv.Alias.Name, err)
		}
		inv.Alias = nil
	}
	return r.dropCollections(ctx, c, func(v1alpha1.InventoryCollection) bool { return false })
}

// collectionEntry returns the inventory entry of a collection (a bare one
// when it is not listed).
func collectionEntry(inv *v1alpha1.Inventory, name string) v1alpha1.InventoryCollection {
	for _, col := range inv.Collections {
		if col.Name == name {
			return col
		}
	}
	return v1alpha1.InventoryCollection{Name: name}
}

// inventoryOf returns the Corpus's inventory, creating it when absent.
func inventoryOf(c *v1alpha1.Corpus) *v1alpha1.Inventory {
	if c.Status.Inventory == nil {
		c.Status.Inventory = &v1alpha1.Inventory{}
	}
	return c.Status.Inventory
}

// hasCollection reports whether the inventory lists the collection.
func hasCollection(inv *v1alpha1.Inventory, name string) bool {
	for _, col := range inv.Collections {
		if col.Name == name {
			return true
		}
	}
	return false
}
