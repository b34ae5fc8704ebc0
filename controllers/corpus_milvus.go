package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// Keys of a Milvus credentials Secret.
const (
	milvusTokenKey    = "token"
	milvusUsernameKey = "username"
	milvusPasswordKey = "password"
)

// milvusIndexes are a Corpus's Milvus collections, one a revision, and the
// alias of the active one.
var milvusIndexes = indexKind{
	store: "Milvus", index: "collection", pointer: "alias", reads: "points at", released: "Milvus objects",
	moved: "AliasMoved", dropped: "CollectionDropped", dropFailed: "CollectionDropFailed",
	uses: (*v1alpha1.Corpus).UsesMilvus, indexName: (*v1alpha1.Corpus).MilvusCollection, pointerName: (*v1alpha1.Corpus).MilvusAlias,
	inventory: milvusInventory, setInventory: setMilvusInventory,
	locate: func(_ context.Context, _ *CorpusReconciler, c *v1alpha1.Corpus, dense int) (func(string) bundle.VectorStoreRef, error) {
		return func(revision string) bundle.VectorStoreRef { return milvusRef(c, revision, dense) }, nil
	},
	configure: configureCollection,
	client:    func(r *CorpusReconciler) externalIndex { return milvusIndex{r} },
}

// milvusInventory reads the collections and the alias of an inventory.
func milvusInventory(inv *v1alpha1.Inventory) ([]childIndex, *stableName) {
	var cols []childIndex
	for _, col := range inv.Collections {
		cols = append(cols, childIndex{name: col.Name, revision: col.Revision, address: col.Address, database: col.Database})
	}
	if inv.Alias == nil {
		return cols, nil
	}
	return cols, &stableName{name: inv.Alias.Name, index: inv.Alias.Collection}
}

// setMilvusInventory writes the collections and the alias of an inventory.
func setMilvusInventory(inv *v1alpha1.Inventory, cols []childIndex, alias *stableName) {
	inv.Collections, inv.Alias = nil, nil
	for _, col := range cols {
		inv.Collections = append(inv.Collections, v1alpha1.InventoryCollection{Name: col.name, Revision: col.revision, Address: col.address, Database: col.database})
	}
	if alias != nil {
		inv.Alias = &v1alpha1.InventoryAlias{Name: alias.name, Collection: alias.index}
	}
}

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

// configureCollection has the build create and fill the revision's
// collection, with the credentials of the Corpus's Secret.
func configureCollection(ctx context.Context, r *CorpusReconciler, c *v1alpha1.Corpus, ref bundle.VectorStoreRef, req *build.Request) error {
	cfg, err := r.milvusConfig(ctx, c, ref)
	if err != nil {
		return err
	}
	req.Collection = &cfg
	return nil
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

// milvusIndex reaches a Corpus's collections, each on the Milvus and
// database the inventory lists it on, with the credentials of the spec.
type milvusIndex struct{ r *CorpusReconciler }

// point sets the alias on the collection.
func (m milvusIndex) point(ctx context.Context, c *v1alpha1.Corpus, alias string, col childIndex) error {
	return m.on(ctx, c, col, "pointing alias "+alias+" at "+col.name, func(s *milvus.Store) error { return s.SetAlias(ctx, alias) })
}

// unpoint drops the alias.
func (m milvusIndex) unpoint(ctx context.Context, c *v1alpha1.Corpus, alias string, col childIndex) error {
	return m.on(ctx, c, col, "dropping alias "+alias, func(s *milvus.Store) error { return ignoreMissing(s.DropAlias(ctx, alias)) })
}

// drop drops the collection.
func (m milvusIndex) drop(ctx context.Context, c *v1alpha1.Corpus, col childIndex) error {
	return m.on(ctx, c, col, "dropping collection "+col.name, func(s *milvus.Store) error { return ignoreMissing(s.Drop(ctx)) })
}

// on opens the collection, runs op on it and closes it; op's error says
// what it was doing.
func (m milvusIndex) on(ctx context.Context, c *v1alpha1.Corpus, col childIndex, doing string, op func(*milvus.Store) error) error {
	store, err := m.r.connect(ctx, c, col)
	if err != nil {
		return err
	}
	defer store.Close(ctx)
	if err := op(store); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	return nil
}

// ignoreMissing counts a missing collection or alias as done.
func ignoreMissing(err error) error {
	if errors.Is(err, milvus.ErrNotFound) {
		return nil
	}
	return err
}

// connect opens an existing collection of the Corpus on the Milvus at the
// address and database the inventory lists (which outlive a change of the
// spec), with the credentials of the spec when it still names Milvus.
func (r *CorpusReconciler) connect(ctx context.Context, c *v1alpha1.Corpus, col childIndex) (*milvus.Store, error) {
	ref := bundle.VectorStoreRef{Kind: bundle.VectorStoreMilvus, Address: col.address, Database: col.database, Collection: col.name}
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
