package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

func TestPlanPromotion(t *testing.T) {
	rev := func(name string) v1alpha1.RevisionStatus { return v1alpha1.RevisionStatus{Name: name} }
	active, older, built := rev("aaaaaaaaaaaaaaaa"), rev("bbbbbbbbbbbbbbbb"), rev("cccccccccccccccc")
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
		active    string
		candidate string
		reason    string
		stalled   bool
	}{
		{"auto promotes", corpus(v1alpha1.PromotionAuto, "", "", &active), built.Name, "", "", false},
		{"manual promotes the first revision", corpus(v1alpha1.PromotionManual, "", "", nil), built.Name, "", "", false},
		{"manual waits", corpus(v1alpha1.PromotionManual, "", "", &active), active.Name, built.Name, v1alpha1.ReasonAwaitingPromotion, false},
		{"manual waits for the right name", corpus(v1alpha1.PromotionManual, "", older.Name, &active), active.Name, built.Name, v1alpha1.ReasonAwaitingPromotion, false},
		{"manual promotes when annotated", corpus(v1alpha1.PromotionManual, "", built.Name, &active), built.Name, "", "", false},
		{"a pin rolls back", corpus(v1alpha1.PromotionAuto, older.Name, "", &active), older.Name, built.Name, v1alpha1.ReasonPinned, false},
		{"a pin of the built revision", corpus(v1alpha1.PromotionAuto, built.Name, "", &active), built.Name, "", "", false},
		{"a pin that is not retained stalls", corpus(v1alpha1.PromotionAuto, "dddddddddddddddd", "", &active), active.Name, built.Name, v1alpha1.ReasonPinnedRevisionMissing, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := planPromotion(tt.c, built)
			candidate := ""
			if plan.candidate != nil {
				candidate = plan.candidate.Name
			}
			if plan.active == nil || plan.active.Name != tt.active || candidate != tt.candidate || plan.reason != tt.reason || plan.stalled != tt.stalled {
				t.Fatalf("plan %+v (active %v), want active %s candidate %q reason %q stalled %v", plan, plan.active, tt.active, tt.candidate, tt.reason, tt.stalled)
			}
			if tt.reason != "" && plan.message == "" {
				t.Fatal("a held revision comes without a message")
			}
		})
	}
}
