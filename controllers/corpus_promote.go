package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// promote makes a revision active as the plan says: the built one once it
// passed its checks, a pinned one (rollback), or none while a candidate is
// held back. The history holds exactly the retained active revisions, with
// when each became active and was superseded. Each transition is an event.
func (r *CorpusReconciler) promote(_ context.Context, s *corpusState) (ctrl.Result, error) {
	st := &s.corpus.Status
	plan := planPromotion(s.corpus, *s.built)
	r.announceCandidate(s.corpus, st.Candidate, plan)
	st.Candidate = plan.candidate
	s.hold = plan.message
	if plan.stalled {
		return ctrl.Result{}, stalled(plan.reason, fmt.Errorf("%s", plan.message))
	}
	if plan.active.Name == s.built.Name {
		st.LastAppliedRevision = s.built.Name
	}
	if st.ActiveRevision != nil && st.ActiveRevision.Name == plan.active.Name {
		// retainRevisions may have been lowered: older revisions go.
		if retain := s.corpus.GetRetainRevisions(); len(st.History) > retain {
			st.History = st.History[:retain]
		}
		return ctrl.Result{}, nil
	}
	previous := "none"
	if st.ActiveRevision != nil {
		previous = st.ActiveRevision.Name
	}
	now := metav1.NewTime(time.Now())
	st.History = planHistory(st.History, *plan.active, s.corpus.GetRetainRevisions(), now)
	st.ActiveRevision = st.History[0].DeepCopy()
	reason := "Promoted"
	if plan.reason == v1alpha1.ReasonPinned {
		reason = "RolledBack"
	}
	r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeNormal, reason, "Promote", "revision %s is active (was %s)", plan.active.Name, previous)
	return ctrl.Result{}, nil
}

// checkPinnedRevision refuses a rollback to a retained revision that lost
// ConfigMaps its manifest names: query pods could not load it, so the
// Corpus stalls on the revision it has (reason PinnedRevisionMissing, and
// a warning event) until the pin names another one or goes. A revision
// already active, or the one just built, is left to repairRevision and the
// query pods.
func (r *CorpusReconciler) checkPinnedRevision(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	c := s.corpus
	pinned := c.PinnedRevision()
	if pinned == "" || pinned == s.built.Name || (c.Status.ActiveRevision != nil && c.Status.ActiveRevision.Name == pinned) {
		return ctrl.Result{}, nil
	}
	stored, err := r.manifests.get(ctx, r.MetadataCache, r.reader(), client.ObjectKey{Namespace: c.Namespace, Name: c.RevisionObjectName(pinned)})
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // not retained: promote says so
	}
	missing, err := r.missingConfigMaps(ctx, c, stored.names)
	if err != nil || len(missing) == 0 {
		return ctrl.Result{}, err
	}
	err = fmt.Errorf("pinned revision %s lost ConfigMaps its manifest names (%s), so query pods cannot load it; pin another retained revision or remove the pin", pinned, describeMissing(missing))
	r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, v1alpha1.ReasonPinnedRevisionMissing, "Promote", "%s", err)
	return ctrl.Result{}, stalled(v1alpha1.ReasonPinnedRevisionMissing, err)
}

// announceCandidate records an event when the candidate changes or comes
// to a new outcome: failed, paused, awaiting promotion or held by a pin.
func (r *CorpusReconciler) announceCandidate(c *v1alpha1.Corpus, before *v1alpha1.RevisionStatus, plan promotionPlan) {
	cand := plan.candidate
	if cand == nil || (before != nil && before.Name == cand.Name && before.Outcome == cand.Outcome) {
		return
	}
	kind := corev1.EventTypeNormal
	if cand.Outcome == v1alpha1.OutcomeFailed || plan.stalled {
		// A pin on a revision no longer retained needs a person.
		kind = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(c, nil, kind, plan.reason, "Promote", "%s", plan.message)
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
// revision is active once built is built and checked. A pinned revision
// wins when it is retained (and stalls the Corpus when it is not). A built
// revision that failed verification or the quality gate stays the
// candidate and stalls the Corpus; one whose gate was inconclusive pauses,
// and under Manual promotion one waits, until the promote annotation names
// it; the very first revision has nothing to replace and is promoted at
// once unless it failed.
func planPromotion(c *v1alpha1.Corpus, built v1alpha1.RevisionStatus) promotionPlan {
	current := c.Status.ActiveRevision
	if pinned := c.PinnedRevision(); pinned != "" && pinned != built.Name {
		return planPin(c, built, pinned)
	}
	if current != nil && current.Name == built.Name {
		return promotionPlan{active: current}
	}
	if plan, failed := planFailure(current, built); failed {
		return plan
	}
	promoted := c.Annotations[v1alpha1.PromoteAnnotation] == built.Name
	if g := built.QualityGate; g != nil && g.Result == v1alpha1.CheckInconclusive && current != nil && !promoted {
		return held(current, built, v1alpha1.OutcomePaused, v1alpha1.ReasonQualityGateInconclusive,
			fmt.Sprintf("revision %s paused: the quality gate was inconclusive (%s); annotate %s=%s to promote it anyway",
				built.Name, g.Message, v1alpha1.PromoteAnnotation, built.Name))
	}
	if c.GetPromotion() == v1alpha1.PromotionManual && current != nil && !promoted {
		return held(current, built, v1alpha1.OutcomeAwaitingPromotion, v1alpha1.ReasonAwaitingPromotion,
			fmt.Sprintf("revision %s is built and awaits promotion: annotate %s=%s", built.Name, v1alpha1.PromoteAnnotation, built.Name))
	}
	return promotionPlan{active: &built}
}

// planPin keeps the pinned revision active when it is retained; otherwise
// the Corpus stalls on the revision it has.
func planPin(c *v1alpha1.Corpus, built v1alpha1.RevisionStatus, pinned string) promotionPlan {
	for i := range c.Status.History {
		if c.Status.History[i].Name == pinned {
			return held(&c.Status.History[i], built, v1alpha1.OutcomeHeld, v1alpha1.ReasonPinned,
				fmt.Sprintf("revision %s is pinned; the latest revision %s is built and waits", pinned, built.Name))
		}
	}
	plan := held(c.Status.ActiveRevision, built, v1alpha1.OutcomeHeld, v1alpha1.ReasonPinnedRevisionMissing,
		fmt.Sprintf("pinned revision %s is not retained (retained: %s); pin one of those or remove the pin", pinned, historyNames(c.Status.History)))
	plan.stalled = true
	return plan
}

// planFailure stalls on a built revision that failed verification or the
// quality gate; the current revision stays active.
func planFailure(current *v1alpha1.RevisionStatus, built v1alpha1.RevisionStatus) (promotionPlan, bool) {
	var plan promotionPlan
	switch {
	case built.Verification != nil && built.Verification.Result == v1alpha1.CheckFailed:
		plan = held(current, built, v1alpha1.OutcomeFailed, v1alpha1.ReasonVerificationFailed,
			fmt.Sprintf("revision %s failed verification and is not promoted: %s", built.Name, built.Verification.Message))
	case built.QualityGate != nil && built.QualityGate.Result == v1alpha1.CheckFailed:
		plan = held(current, built, v1alpha1.OutcomeFailed, v1alpha1.ReasonQualityGateFailed,
			fmt.Sprintf("revision %s failed the quality gate and is not promoted: %s", built.Name, built.QualityGate.Message))
	default:
		return plan, false
	}
	plan.stalled = true
	return plan, true
}

// held is a plan that keeps active and holds built back as the candidate
// with an outcome and the reason and message that explain it.
func held(active *v1alpha1.RevisionStatus, built v1alpha1.RevisionStatus, outcome v1alpha1.RevisionOutcome, reason, message string) promotionPlan {
	built.Outcome = outcome
	return promotionPlan{active: active, candidate: &built, reason: reason, message: message}
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

// planHistory puts the newly active revision first, marked Active and
// promoted at now; the entry it replaces becomes Superseded at now; an
// older entry of the same revision is dropped; at most retain entries are
// kept.
func planHistory(history []v1alpha1.RevisionStatus, active v1alpha1.RevisionStatus, retain int, now metav1.Time) []v1alpha1.RevisionStatus {
	active.Outcome, active.PromotedAt, active.SupersededAt = v1alpha1.OutcomeActive, &now, nil
	out := []v1alpha1.RevisionStatus{active}
	for _, h := range history {
		if h.Name == active.Name || len(out) >= retain {
			continue
		}
		if h.Outcome != v1alpha1.OutcomeSuperseded {
			h.Outcome, h.SupersededAt = v1alpha1.OutcomeSuperseded, &now
		}
		out = append(out, h)
	}
	return out
}
