package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// TestSuspendedObjectsSaySo suspends a Corpus and a Retriever and edits
// both: their Ready condition says Suspended and which generation waits,
// no Reconciling or Stalled is set, nothing is rebuilt, and resuming
// applies the edit.
func TestSuspendedObjectsSaySo(t *testing.T) {
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)
	rt := newRetriever(t, ns, "ask", c.Name)
	first := c.Status.ActiveRevision.Name

	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = true })
	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Sources[0].Inline = c.Spec.Sources[0].Inline[:2] })
	waitSuspended(t, c, &c.Status.Conditions, metav1.ConditionTrue)
	if c.Status.ActiveRevision.Name != first || c.Status.ObservedGeneration == c.Generation {
		t.Fatalf("a suspended Corpus moved: revision %s, observedGeneration %d of %d", c.Status.ActiveRevision.Name, c.Status.ObservedGeneration, c.Generation)
	}

	get(t, rt)
	patch := client.MergeFrom(rt.DeepCopy())
	rt.Spec.Suspend, rt.Spec.MaxParents = true, 5
	if err := k8s.Patch(context.Background(), rt, patch); err != nil {
		t.Fatal(err)
	}
	waitSuspended(t, rt, &rt.Status.Conditions, "")

	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = false })
	waitActiveAfter(t, c, first)
	if ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady); ready.Reason != v1alpha1.ReasonSucceeded {
		t.Fatalf("resumed Corpus: %+v", ready)
	}
}

// waitSuspended waits until obj's Ready condition has reason Suspended
// (with want as its status, unless want is empty), says which generation
// waits, and neither Reconciling nor Stalled is set.
func waitSuspended(t *testing.T, obj client.Object, conds *[]metav1.Condition, want metav1.ConditionStatus) {
	t.Helper()
	eventually(t, 30*time.Second, obj.GetName()+" to say it is suspended", func() (bool, error) {
		get(t, obj)
		ready := meta.FindStatusCondition(*conds, v1alpha1.ConditionReady)
		ok := ready != nil && ready.Reason == v1alpha1.ReasonSuspended && (want == "" || ready.Status == want) &&
			contains(ready.Message, fmt.Sprintf("generation %d waits", obj.GetGeneration())) &&
			meta.FindStatusCondition(*conds, v1alpha1.ConditionReconciling) == nil &&
			meta.FindStatusCondition(*conds, v1alpha1.ConditionStalled) == nil
		return ok, fmt.Errorf("%+v", *conds)
	})
}
