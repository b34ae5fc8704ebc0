package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// externalIndex is the seam between the Corpus reconciler and a database
// that holds the children of its revisions (Milvus, PostgreSQL), in the
// shape of crossplane's ExternalClient: the operations the reconciler asks
// of it, each idempotent, with the Corpus's credentials. The reconciler
// tracks what the Corpus owns there in its inventory.
type externalIndex interface {
	// point makes the stable name (an alias, a view) read the index.
	point(ctx context.Context, c *v1alpha1.Corpus, name string, index childIndex) error
	// unpoint removes the stable name, which reads the index; a missing
	// one counts as removed.
	unpoint(ctx context.Context, c *v1alpha1.Corpus, name string, index childIndex) error
	// drop drops the index; a missing one counts as dropped.
	drop(ctx context.Context, c *v1alpha1.Corpus, index childIndex) error
}

// childIndex is the child index of one revision in an external database
// (a Milvus collection, a PostgreSQL table) as the inventory lists it:
// where it was created, which outlives a change of the spec.
type childIndex struct {
	name, revision, address, database string
	// schema holds a PostgreSQL table; Milvus has none.
	schema string
}

// qualify names an object of the index's schema, the index's own name
// included, as messages show it.
func (i childIndex) qualify(name string) string {
	if i.schema == "" {
		return name
	}
	return i.schema + "." + name
}

// stableName is the Corpus's name in an external database (a Milvus
// alias, a PostgreSQL view) and the index it reads.
type stableName struct{ name, index string }

// indexKind is one kind of external index, declared once: how a Corpus
// names its objects there, where its inventory lists them, where a
// revision's children go, and the words its events and errors use.
type indexKind struct {
	// store, index and pointer name the database and its objects
	// ("Milvus", "collection", "alias"); reads is what the stable name
	// does to the index ("points at"); released names what the deletion
	// policy releases ("Milvus objects").
	store, index, pointer, reads, released string
	// moved, dropped and dropFailed are the reasons of the events.
	moved, dropped, dropFailed string
	// uses reports whether the Corpus's spec names the store;
	// indexName and pointerName name the Corpus's objects in it.
	uses        func(*v1alpha1.Corpus) bool
	indexName   func(c *v1alpha1.Corpus, revision string) string
	pointerName func(*v1alpha1.Corpus) string
	// inventory reads the kind's part of an inventory, setInventory
	// writes it.
	inventory    func(*v1alpha1.Inventory) ([]childIndex, *stableName)
	setInventory func(*v1alpha1.Inventory, []childIndex, *stableName)
	// locate returns where the spec puts a revision's children (revision
	// "": what names the revision); configure gives the build the
	// configuration of the revision's index, with the credentials.
	locate    func(ctx context.Context, r *CorpusReconciler, c *v1alpha1.Corpus, dense int) (func(revision string) bundle.VectorStoreRef, error)
	configure func(ctx context.Context, r *CorpusReconciler, c *v1alpha1.Corpus, ref bundle.VectorStoreRef, req *build.Request) error
	// client reaches the store's databases.
	client func(*CorpusReconciler) externalIndex
}

// indexKinds are the kinds of external index, in the order they are
// collected and released.
var indexKinds = []*indexKind{&milvusIndexes, &postgresIndexes}

// indexKindOf is the kind of external index the Corpus's spec names, nil
// when the revision holds the children.
func indexKindOf(c *v1alpha1.Corpus) *indexKind {
	for _, k := range indexKinds {
		if k.uses(c) {
			return k
		}
	}
	return nil
}

// clientOf reaches the databases of kind k: the reconciler's
// indexClients when set, the real ones otherwise.
func (r *CorpusReconciler) clientOf(k *indexKind) externalIndex {
	if r.indexClients != nil {
		return r.indexClients(k)
	}
	return k.client(r)
}

// findIndex returns the listed index of that name.
func findIndex(indexes []childIndex, name string) (childIndex, bool) {
	i := slices.IndexFunc(indexes, func(idx childIndex) bool { return idx.name == name })
	if i < 0 {
		return childIndex{}, false
	}
	return indexes[i], true
}

// inventoryOf returns the Corpus's inventory, creating it when absent.
func inventoryOf(c *v1alpha1.Corpus) *v1alpha1.Inventory {
	if c.Status.Inventory == nil {
		c.Status.Inventory = &v1alpha1.Inventory{}
	}
	return c.Status.Inventory
}

// recordIndex adds the revision's index to the inventory and publishes the
// status at once, before the index can exist, so that a crash cannot leak
// it.
func (r *CorpusReconciler) recordIndex(s *corpusState, k *indexKind) error {
	inv := inventoryOf(s.corpus)
	indexes, pointer := k.inventory(inv)
	name := k.indexName(s.corpus, s.revision)
	if _, listed := findIndex(indexes, name); listed {
		return nil
	}
	ref := s.vectorStore
	indexes = append(indexes, childIndex{name: name, revision: s.revision, address: ref.Address, database: ref.Database, schema: ref.Schema})
	k.setInventory(inv, indexes, pointer)
	return s.progress.flush()
}

// pointStableName points the Corpus's stable name (its Milvus alias or
// PostgreSQL view) at the active revision's index once every Retriever of
// the Corpus serves that revision, so that readers outside parentrag
// switch together with the query pods.
func (r *CorpusReconciler) pointStableName(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	c := s.corpus
	k := indexKindOf(c)
	if k == nil || c.Status.ActiveRevision == nil || c.Status.Inventory == nil {
		return ctrl.Result{}, nil
	}
	indexes, pointer := k.inventory(c.Status.Inventory)
	active, listed := findIndex(indexes, k.indexName(c, c.Status.ActiveRevision.Name))
	if !listed || (pointer != nil && pointer.index == active.name) {
		return ctrl.Result{}, nil
	}
	serving, err := r.retrieversServe(ctx, c, c.Status.ActiveRevision.Name)
	if err != nil || !serving {
		return ctrl.Result{}, err
	}
	name := k.pointerName(c)
	if err := r.clientOf(k).point(ctx, c, name, active); err != nil {
		return ctrl.Result{}, err
	}
	k.setInventory(c.Status.Inventory, indexes, &stableName{name: name, index: active.name})
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, k.moved, "Promote", "%s %s now %s %s", k.pointer, active.qualify(name), k.reads, active.name)
	return ctrl.Result{}, nil
}

// retrieversServe reports whether every Retriever of the Corpus on the
// Active track serves the revision (true when there is none); previews of
// the candidate do not hold the stable name back.
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

// dropIndexes drops the inventoried indexes of kind k whose revisions keep
// does not accept, skipping the one the stable name reads, and removes each
// dropped (or already missing) one from the inventory. A failed drop stays
// in the inventory and is retried.
func (r *CorpusReconciler) dropIndexes(ctx context.Context, c *v1alpha1.Corpus, k *indexKind, keep func(revision string) bool) error {
	inv := inventoryOf(c)
	indexes, pointer := k.inventory(inv)
	var kept []childIndex
	var errs []error
	for _, idx := range indexes {
		if keep(idx.revision) || (pointer != nil && pointer.index == idx.name) {
			kept = append(kept, idx)
			continue
		}
		if err := r.clientOf(k).drop(ctx, c, idx); err != nil {
			kept = append(kept, idx)
			errs = append(errs, err)
			continue
		}
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, k.dropped, "GarbageCollect", "dropped %s %s %s", k.store, k.index, idx.qualify(idx.name))
	}
	k.setInventory(inv, kept, pointer)
	return errors.Join(errs...)
}

// dropAllIndexes removes the stable name, then drops every inventoried
// index of kind k.
func (r *CorpusReconciler) dropAllIndexes(ctx context.Context, c *v1alpha1.Corpus, k *indexKind) error {
	inv := inventoryOf(c)
	indexes, pointer := k.inventory(inv)
	if pointer != nil {
		if read, listed := findIndex(indexes, pointer.index); listed {
			if err := r.clientOf(k).unpoint(ctx, c, pointer.name, read); err != nil {
				return err
			}
		}
		k.setInventory(inv, indexes, nil)
	}
	return r.dropIndexes(ctx, c, k, func(string) bool { return false })
}

// collectIndexes drops the indexes of kind k whose revisions are not kept.
// After the Corpus left the store its indexes serve nobody, and all go;
// the spec may no longer hold the credentials that reach them, so a
// failure is reported and retried on later reconciles without holding the
// Corpus back.
func (r *CorpusReconciler) collectIndexes(ctx context.Context, c *v1alpha1.Corpus, k *indexKind, keep map[string]bool) error {
	if c.Status.Inventory == nil {
		return nil
	}
	if indexes, pointer := k.inventory(c.Status.Inventory); len(indexes) == 0 && pointer == nil {
		return nil
	}
	if !k.uses(c) {
		if err := r.dropAllIndexes(ctx, c, k); err != nil {
			r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, k.dropFailed, "GarbageCollect",
				"the Corpus no longer uses %s, but its %ss could not be dropped: %v", k.store, k.index, err)
		}
		return nil
	}
	return r.dropIndexes(ctx, c, k, func(revision string) bool { return keep[revision] })
}

// releaseIndexes applies the deletion policy to a deleted Corpus's
// external indexes: Delete removes the stable names and drops every index,
// kind by kind; Retain leaves them.
func (r *CorpusReconciler) releaseIndexes(ctx context.Context, c *v1alpha1.Corpus) error {
	if c.Status.Inventory == nil || c.GetDeletionPolicy() == v1alpha1.DeletionRetain {
		return nil
	}
	for _, k := range indexKinds {
		if err := r.dropAllIndexes(ctx, c, k); err != nil {
			return fmt.Errorf("releasing %s (deletionPolicy %s): %w", k.released, c.GetDeletionPolicy(), err)
		}
	}
	return nil
}
