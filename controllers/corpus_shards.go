package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/kubemeta"
)

// collectSharedShards deletes the shards the Corpus's revisions share
// (cmbundle.SharingSegments) that no stored revision's manifest names any
// more: those of deleted revisions, and those an interrupted or superseded
// build left. It lists the shards from the informer: a shard it lacks is
// left for later. When the manifests the informer lists, all read before,
// name every shard, nothing is to be deleted and no request is sent.
// Otherwise it reads the manifests from the API server, not the informer,
// so that a manifest created a moment ago keeps its shards.
func (r *CorpusReconciler) collectSharedShards(ctx context.Context, c *v1alpha1.Corpus) error {
	shards, err := sharedShards(ctx, r.metadataReader(), c)
	if err != nil || len(shards) == 0 {
		return err
	}
	if known, ok := r.manifests.namesKnown(ctx, r.MetadataCache, c); ok && allIn(shards, known) {
		return nil
	}
	named, err := r.namedShards(ctx, c)
	if err != nil {
		return err
	}
	deleted := 0
	for name := range shards {
		if named[name] {
			continue
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name}}
		if err := r.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting shared shard %s: %w", name, err)
		}
		deleted++
	}
	if deleted > 0 {
		log.FromContext(ctx).Info("deleted shared shards no revision names", "deleted", deleted, "kept", len(shards)-deleted)
	}
	return nil
}

// namedShards is the set of ConfigMaps the manifests of the Corpus's
// stored revisions name, as the API server lists them now. A manifest
// that cannot be read is an error: no shard is deleted on a guess.
func (r *CorpusReconciler) namedShards(ctx context.Context, c *v1alpha1.Corpus) (map[string]bool, error) {
	stored, err := r.manifests.list(ctx, r.reader(), c)
	if err != nil {
		return nil, fmt.Errorf("reading the revision manifests: %w", err)
	}
	return namesOf(stored), nil
}

// allIn reports whether every member of set is in of.
func allIn(set, of map[string]bool) bool {
	for name := range set {
		if !of[name] {
			return false
		}
	}
	return true
}

// sharedShards is the set of the Corpus's shared shards (cmbundle.
// SharingSegments) that reader lists, as metadata. Read from the API
// server, it is what is stored now: only this reconciler deletes them
// (collectSharedShards, never during a build), so none goes before the
// build's manifest names it.
func sharedShards(ctx context.Context, reader client.Reader, c *v1alpha1.Corpus) (map[string]bool, error) {
	list := kubemeta.ConfigMapList()
	sel := client.MatchingLabelsSelector{Selector: cmbundle.SharedShardSelector(c.Name)}
	if err := reader.List(ctx, list, client.InNamespace(c.Namespace), sel); err != nil {
		return nil, fmt.Errorf("listing shared shards: %w", err)
	}
	names := make(map[string]bool, len(list.Items))
	for _, cm := range list.Items {
		names[cm.Name] = true
	}
	return names, nil
}
