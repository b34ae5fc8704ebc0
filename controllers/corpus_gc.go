package controllers

import (
	"context"
	"fmt"
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
)

// collectGarbage deletes the ConfigMaps of every revision that is neither
// in the history nor the one just built, including shards that a crashed
// build left without a manifest, and drops their Milvus collections once
// the alias no longer points at them.
func (r *CorpusReconciler) collectGarbage(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	if inv := s.corpus.Status.Inventory; inv != nil && !s.corpus.UsesMilvus() && (len(inv.Collections) > 0 || inv.Alias != nil) {
		// The Corpus left Milvus: its collections serve nobody any more. The
		// spec may no longer hold the credentials, so a failure is reported
		// and retried on later reconciles without holding the Corpus back.
		if err := r.dropAll(ctx, s.corpus); err != nil {
			r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeWarning, "CollectionDropFailed", "GarbageCollect",
				"the Corpus no longer uses Milvus, but its collections could not be dropped: %v", err)
		}
	}
	if s.corpus.UsesMilvus() {
		keep := map[string]bool{s.revision: true}
		for _, h := range s.corpus.Status.History {
			keep[h.Name] = true
		}
		if err := r.dropCollections(ctx, s.corpus, func(c v1alpha1.InventoryCollection) bool { return keep[c.Revision] }); err != nil {
			return ctrl.Result{}, err
		}
	}
	present, err := r.storedRevisions(ctx, s.corpus)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, rev := range planGarbage(present, s.corpus.Status.History, s.revision) {
		if err := r.deleteRevisionObjects(ctx, s.corpus, rev); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeNormal, "RevisionDeleted", "GarbageCollect", "deleted revision %s, past retention", rev)
	}
	return ctrl.Result{}, nil
}

// planGarbage returns the stored revisions to delete: those not retained
// and not current, sorted.
func planGarbage(present []string, history []v1alpha1.RevisionStatus, current string) []string {
	keep := map[string]bool{current: true}
	for _, h := range history {
		keep[h.Name] = true
	}
	var out []string
	for _, rev := range present {
		if !keep[rev] {
			out = append(out, rev)
		}
	}
	sort.Strings(out)
	return out
}

// storedRevisions lists the revisions that have ConfigMaps.
func (r *CorpusReconciler) storedRevisions(ctx context.Context, c *v1alpha1.Corpus) ([]string, error) {
	var list corev1.ConfigMapList
	if err := r.List(ctx, &list, client.InNamespace(c.Namespace), client.MatchingLabels{cmbundle.LabelCorpus: c.Name}); err != nil {
		return nil, fmt.Errorf("listing revision ConfigMaps: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, cm := range list.Items {
		if rev := cm.Labels[cmbundle.LabelRevision]; rev != "" && !seen[rev] {
			seen[rev] = true
			out = append(out, rev)
		}
	}
	return out, nil
}

// finalize deletes every revision of a deleted Corpus, then lets it go.
func (r *CorpusReconciler) finalize(ctx context.Context, c *v1alpha1.Corpus) error {
	if !controllerutil.ContainsFinalizer(c, CorpusFinalizer) {
		return nil
	}
	// What was fetched for the Corpus is no longer needed in memory.
	r.fetchers.Forget(urlsOf(c)...)
	r.leanFetchers.Forget(urlsOf(c)...)
	if err := r.releaseMilvus(ctx, c); err != nil {
		return fmt.Errorf("releasing Milvus objects (deletionPolicy %s): %w", c.GetDeletionPolicy(), err)
	}
	for _, obj := range []client.Object{&batchv1.Job{}, &corev1.PersistentVolumeClaim{}, &corev1.ConfigMap{}} {
		err := r.DeleteAllOf(ctx, obj, client.InNamespace(c.Namespace), client.MatchingLabels{cmbundle.LabelCorpus: c.Name},
			client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil {
			return fmt.Errorf("deleting revisions: %w", err)
		}
	}
	controllerutil.RemoveFinalizer(c, CorpusFinalizer)
	return client.IgnoreNotFound(r.Update(ctx, c))
}
