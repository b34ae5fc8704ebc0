package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
)

// promote makes a revision active as the plan says: the built one, a
// pinned one (rollback), or none while a built candidate awaits manual
// promotion. The history holds exactly the retained active revisions.
func (r *CorpusReconciler) promote(_ context.Context, s *corpusState) (ctrl.Result, error) {
	st := &s.corpus.Status
	plan := planPromotion(s.corpus, *s.built)
	st.Candidate = plan.candidate
	s.hold = plan.message
	if plan.stalled {
		s.reason = plan.reason
		return ctrl.Result{}, stalled(fmt.Errorf("%s", plan.message))
	}
	if plan.active.Name == s.built.Name {
		st.LastAppliedRevision = s.built.Name
	}
	if st.ActiveRevision != nil && st.ActiveRevision.Name == plan.active.Name {
		return ctrl.Result{}, nil
	}
	previous := "none"
	if st.ActiveRevision != nil {
		previous = st.ActiveRevision.Name
	}
	st.ActiveRevision = plan.active.DeepCopy()
	st.History = planHistory(st.History, *plan.active, s.corpus.GetRetainRevisions())
	reason := "Promoted"
	if plan.reason == v1alpha1.ReasonPinned {
		reason = "RolledBack"
	}
	r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeNormal, reason, "Promote", "revision %s is active (was %s)", plan.active.Name, previous)
	return ctrl.Result{}, nil
}

// promotionPlan is which revision should be active, and why another one
// waits.
type promotionPlan struct {
	active    *v1alpha1.RevisionStatus
	candidate *v1alpha1.RevisionStatus
	reason    string
	message   string
	stalled   bool
}

// planPromotion decides, from the spec and the status alone, which
// revision is active once built is built. A pinned revision wins when it is
// retained (and stalls the Corpus when it is not); under Manual promotion
// a built revision waits as the candidate until the promote annotation
// names it, except the very first, which has nothing to replace.
func planPromotion(c *v1alpha1.Corpus, built v1alpha1.RevisionStatus) promotionPlan {
	current := c.Status.ActiveRevision
	if pinned := c.PinnedRevision(); pinned != "" && pinned != built.Name {
		plan := promotionPlan{candidate: &built, reason: v1alpha1.ReasonPinned}
		for i := range c.Status.History {
			if c.Status.History[i].Name == pinned {
				plan.active = &c.Status.History[i]
				plan.message = fmt.Sprintf("revision %s is pinned; the latest revision %s is built and waits", pinned, built.Name)
				return plan
			}
		}
		plan.active, plan.stalled, plan.reason = current, true, v1alpha1.ReasonPinnedRevisionMissing
		plan.message = fmt.Sprintf("pinned revision %s is not retained (retained: %s); pin one of those or remove the pin", pinned, historyNames(c.Status.History))
		return plan
	}
	if c.GetPromotion() == v1alpha1.PromotionManual && current != nil && current.Name != built.Name && c.Annotations[v1alpha1.PromoteAnnotation] != built.Name {
		return promotionPlan{active: current, candidate: &built, reason: v1alpha1.ReasonAwaitingPromotion,
			message: fmt.Sprintf("revision %s is built and awaits promotion: annotate %s=%s", built.Name, v1alpha1.PromoteAnnotation, built.Name)}
	}
	return promotionPlan{active: &built}
}

// historyNames lists the revisions of a history.
func historyNames(history []v1alpha1.RevisionStatus) string {
	names := make([]string, len(history))
	for i, h := range history {
		names[i] = h.Name
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// planHistory puts the newly active revision first, drops an older entry
// of the same revision, and keeps at most retain entries.
func planHistory(history []v1alpha1.RevisionStatus, active v1alpha1.RevisionStatus, retain int) []v1alpha1.RevisionStatus {
	out := []v1alpha1.RevisionStatus{active}
	for _, h := range history {
		if h.Name != active.Name && len(out) < retain {
			out = append(out, h)
		}
	}
	return out
}

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
		err := r.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(s.corpus.Namespace),
			client.MatchingLabels{cmbundle.LabelCorpus: s.corpus.Name, cmbundle.LabelRevision: rev})
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("deleting revision %s: %w", rev, err)
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
	if err := r.releaseMilvus(ctx, c); err != nil {
		return fmt.Errorf("releasing Milvus objects (deletionPolicy %s): %w", c.GetDeletionPolicy(), err)
	}
	err := r.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(c.Namespace), client.MatchingLabels{cmbundle.LabelCorpus: c.Name})
	if err != nil {
		return fmt.Errorf("deleting revisions: %w", err)
	}
	controllerutil.RemoveFinalizer(c, CorpusFinalizer)
	return r.Update(ctx, c)
}
