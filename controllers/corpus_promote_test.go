package controllers

import (
	"testing"

	"k8s.io/utils/ptr"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

func TestPlanPromotion(t *testing.T) {
	rev := func(name string) v1alpha1.RevisionStatus { return v1alpha1.RevisionStatus{Name: name} }
	active, older, built := rev("aaaaaaaaaaaaaaaa"), rev("bbbbbbbbbbbbbbbb"), rev("cccccccccccccccc")
	checked := func(verification, gate v1alpha1.CheckResult) v1alpha1.RevisionStatus {
		r := built
		r.Verification = &v1alpha1.VerificationStatus{Result: verification, Message: "checked"}
		if gate != "" {
			r.QualityGate = &v1alpha1.QualityGateStatus{Result: gate, Message: "measured"}
		}
		return r
	}
	corpus := func(promotion v1alpha1.Promotion, pinned, annotation string, current *v1alpha1.RevisionStatus) *v1alpha1.Corpus {
		c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
		c.Spec.Rollout = &v1alpha1.Rollout{Promotion: promotion, PinnedRevision: pinned}
		if annotation != "" {
			c.Annotations[v1alpha1.PromoteAnnotation] = annotation
		}
		c.Status.ActiveRevision = current
		if current != nil {
			c.Status.History = []v1alpha1.RevisionStatus{*current, older}
		}
		return c
	}
	tests := []struct {
		name      string
		c         *v1alpha1.Corpus
		built     *v1alpha1.RevisionStatus
		active    string
		candidate string
		reason    string
		stalled   bool
	}{
		{"auto promotes", corpus(v1alpha1.PromotionAuto, "", "", &active), nil, built.Name, "", "", false},
		{"manual promotes the first revision", corpus(v1alpha1.PromotionManual, "", "", nil), nil, built.Name, "", "", false},
		{"manual waits", corpus(v1alpha1.PromotionManual, "", "", &active), nil, active.Name, built.Name, v1alpha1.ReasonAwaitingPromotion, false},
		{"manual waits for the right name", corpus(v1alpha1.PromotionManual, "", older.Name, &active), nil, active.Name, built.Name, v1alpha1.ReasonAwaitingPromotion, false},
		{"manual promotes when annotated", corpus(v1alpha1.PromotionManual, "", built.Name, &active), nil, built.Name, "", "", false},
		{"a pin rolls back", corpus(v1alpha1.PromotionAuto, older.Name, "", &active), nil, older.Name, built.Name, v1alpha1.ReasonPinned, false},
		{"a pin of the built revision", corpus(v1alpha1.PromotionAuto, built.Name, "", &active), nil, built.Name, "", "", false},
		{"a pin that is not retained stalls", corpus(v1alpha1.PromotionAuto, "dddddddddddddddd", "", &active), nil, active.Name, built.Name, v1alpha1.ReasonPinnedRevisionMissing, true},
		{"failed verification stalls", corpus(v1alpha1.PromotionAuto, "", "", &active), ptr.To(checked(v1alpha1.CheckFailed, "")), active.Name, built.Name, v1alpha1.ReasonVerificationFailed, true},
		{"a failed gate stalls even when annotated", corpus(v1alpha1.PromotionAuto, "", built.Name, &active), ptr.To(checked(v1alpha1.CheckPassed, v1alpha1.CheckFailed)), active.Name, built.Name, v1alpha1.ReasonQualityGateFailed, true},
		{"a failed first revision leaves none active", corpus(v1alpha1.PromotionAuto, "", "", nil), ptr.To(checked(v1alpha1.CheckPassed, v1alpha1.CheckFailed)), "", built.Name, v1alpha1.ReasonQualityGateFailed, true},
		{"an inconclusive gate pauses", corpus(v1alpha1.PromotionAuto, "", "", &active), ptr.To(checked(v1alpha1.CheckPassed, v1alpha1.CheckInconclusive)), active.Name, built.Name, v1alpha1.ReasonQualityGateInconclusive, false},
		{"the annotation resumes a pause", corpus(v1alpha1.PromotionAuto, "", built.Name, &active), ptr.To(checked(v1alpha1.CheckPassed, v1alpha1.CheckInconclusive)), built.Name, "", "", false},
		{"a passed gate promotes", corpus(v1alpha1.PromotionAuto, "", "", &active), ptr.To(checked(v1alpha1.CheckPassed, v1alpha1.CheckPassed)), built.Name, "", "", false},
		{"manual still waits after a passed gate", corpus(v1alpha1.PromotionManual, "", "", &active), ptr.To(checked(v1alpha1.CheckPassed, v1alpha1.CheckPassed)), active.Name, built.Name, v1alpha1.ReasonAwaitingPromotion, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := built
			if tt.built != nil {
				b = *tt.built
			}
			plan := planPromotion(tt.c, b)
			candidate, activeName := "", ""
			if plan.candidate != nil {
				candidate = plan.candidate.Name
			}
			if plan.active != nil {
				activeName = plan.active.Name
			}
			if activeName != tt.active || candidate != tt.candidate || plan.reason != tt.reason || plan.stalled != tt.stalled {
				t.Fatalf("plan %+v (active %v), want active %s candidate %q reason %q stalled %v", plan, plan.active, tt.active, tt.candidate, tt.reason, tt.stalled)
			}
			if tt.reason != "" && plan.message == "" {
				t.Fatal("a held revision comes without a message")
			}
		})
	}
}

func TestPlanHistoryMarksOutcomesAndKeepsRetention(t *testing.T) {
	now := metav1.Now()
	history := []v1alpha1.RevisionStatus{{Name: "b", Outcome: v1alpha1.OutcomeActive}, {Name: "a", Outcome: v1alpha1.OutcomeSuperseded}}
	got := planHistory(history, v1alpha1.RevisionStatus{Name: "c"}, 2, now)
	if len(got) != 2 || got[0].Name != "c" || got[1].Name != "b" {
		t.Fatalf("history %+v, want c then b", got)
	}
	if got[0].Outcome != v1alpha1.OutcomeActive || got[0].PromotedAt == nil || got[1].Outcome != v1alpha1.OutcomeSuperseded || got[1].SupersededAt == nil {
		t.Fatalf("outcomes not marked: %+v", got)
	}
	// Rolling back to b makes it active again and c superseded.
	back := planHistory(got, got[1], 2, now)
	if back[0].Name != "b" || back[0].SupersededAt != nil || back[1].Name != "c" || back[1].Outcome != v1alpha1.OutcomeSuperseded {
		t.Fatalf("rollback history %+v", back)
	}
}
