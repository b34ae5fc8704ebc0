package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/kubemeta"
)

// collectGarbage deletes the ConfigMaps of every revision that is neither
// in the history, nor the one just built, nor loaded by a query pod of a
// Retriever, including shards that a crashed build left without a
// manifest, and drops their Milvus collections and Postgres tables once the
// alias or view no longer points at them.
func (r *CorpusReconciler) collectGarbage(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	// A pod of a rollout still under way may restart and load its
	// revision again, whatever the retention: what a ReplicaSet runs stays.
	inUse, _, err := revisionsInUse(ctx, r.Client, s.corpus)
	if err != nil {
		return ctrl.Result{}, err
	}
	keep := retainedRevisions(s.corpus.Status.History, s.revision, inUse)
	for _, k := range indexKinds {
		if err := r.collectIndexes(ctx, s.corpus, k, keep); err != nil {
			return ctrl.Result{}, err
		}
	}
	present, err := r.storedRevisions(ctx, s.corpus)
	if err != nil {
		return ctrl.Result{}, err
	}
	garbage := planGarbage(present, keep)
	if len(garbage) == 0 {
		return ctrl.Result{}, r.collectSharedShards(ctx, s.corpus)
	}
	// The status must stop naming a revision before its objects go: were
	// the operator to stop in between, it would name one that is gone.
	if err := s.progress.collecting(); err != nil {
		return ctrl.Result{}, err
	}
	defer s.progress.stop()
	for _, rev := range garbage {
		if err := r.deleteRevisionObjects(ctx, s.corpus, rev); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeNormal, "RevisionDeleted", "GarbageCollect", "deleted revision %s, past retention", rev)
	}
	return ctrl.Result{}, r.collectSharedShards(ctx, s.corpus)
}

// retainedRevisions is the set of revisions garbage collection keeps: the
// current one, those in the history, and those in use by query pods.
func retainedRevisions(history []v1alpha1.RevisionStatus, current string, inUse map[string]bool) map[string]bool {
	keep := map[string]bool{current: true}
	for _, h := range history {
		keep[h.Name] = true
	}
	for rev := range inUse {
		keep[rev] = true
	}
	return keep
}

// planGarbage returns the stored revisions to delete: those not kept,
// sorted.
func planGarbage(present []string, keep map[string]bool) []string {
	var out []string
	for _, rev := range present {
		if !keep[rev] {
			out = append(out, rev)
		}
	}
	sort.Strings(out)
	return out
}

// storedRevisions lists the revisions that have ConfigMaps, from their
// labels alone, as the manager's metadata informer holds them (the API
// server without one): the shards' data stays on the API server, and a
// revision the informer has not seen yet is collected at a later
// reconcile.
func (r *CorpusReconciler) storedRevisions(ctx context.Context, c *v1alpha1.Corpus) ([]string, error) {
	list := kubemeta.ConfigMapList()
	if err := r.metadataReader().List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{cmbundle.LabelCorpus: c.Name}); err != nil {
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
// While query pods of its Retrievers still run (their Retrievers scale
// them to zero when the Corpus goes), it waits, so that no pod restarts
// into a revision already deleted.
func (r *CorpusReconciler) finalize(ctx context.Context, c *v1alpha1.Corpus) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(c, CorpusFinalizer) {
		return ctrl.Result{}, nil
	}
	if _, running, err := revisionsInUse(ctx, r.Client, c); err != nil || len(running) > 0 {
		if err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: deletionPoll}, r.reportDeletionWait(ctx, c, running)
	}
	return r.release(ctx, c)
}

// deletionPoll is how often a deleted Corpus looks again for query pods
// of its Retrievers; their ReplicaSets' events requeue it sooner.
const deletionPoll = 5 * time.Second

// reportDeletionWait says in the Corpus's conditions which Retrievers'
// pods its deletion waits for.
func (r *CorpusReconciler) reportDeletionWait(ctx context.Context, c *v1alpha1.Corpus, running []string) error {
	base := c.DeepCopy()
	msg := fmt.Sprintf("deleting: waiting for the query pods of %s %s to stop before deleting the revisions (the Retrievers scale them to zero)",
		plural(len(running), "Retriever", "Retrievers"), strings.Join(running, ", "))
	markNotReady(&c.Status.Conditions, c.Generation, v1alpha1.ReasonRetrieversRunning, msg)
	return client.IgnoreNotFound(patchStatus(ctx, r.Client, c, base))
}

// release deletes what the Corpus owns, in and outside the cluster, and
// removes its finalizer.
func (r *CorpusReconciler) release(ctx context.Context, c *v1alpha1.Corpus) (ctrl.Result, error) {
	// What was fetched for the Corpus is no longer needed in memory.
	r.fetchers.Forget(urlsOf(c)...)
	r.leanFetchers.Forget(urlsOf(c)...)
	r.fetchers.ForgetSourceRefs(c.Namespace, c.Spec.Sources)
	if res, err := r.releaseExternal(ctx, c); err != nil || res.RequeueAfter > 0 {
		return res, err
	}
	if err := r.deleteLabelled(ctx, c.Namespace, map[string]string{cmbundle.LabelCorpus: c.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("deleting revisions: %w", err)
	}
	return ctrl.Result{}, client.IgnoreNotFound(removeFinalizer(ctx, r.Client, c, CorpusFinalizer))
}
