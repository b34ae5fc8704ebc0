package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// changeChild sets the policy's child size and waits for the Corpus to
// build the revision it calls for.
func changeChild(t *testing.T, p *v1alpha1.ChunkingPolicy, c *v1alpha1.Corpus, size int) string {
	t.Helper()
	before := c.Status.LastAttemptedRevision
	get(t, p)
	p.Spec.Child = &v1alpha1.ChunkSize{ChunkSize: size}
	if err := k8s.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the new revision to be built", func() (bool, error) {
		get(t, c)
		return c.Status.LastAttemptedRevision != before && (c.Status.Candidate != nil || c.Status.ActiveRevision.Name == c.Status.LastAttemptedRevision), nil
	})
	return c.Status.LastAttemptedRevision
}

// manualCorpus creates a Corpus of sampleDocs under Manual promotion and
// waits until its first revision is active.
func manualCorpus(t *testing.T, ns string) (*v1alpha1.ChunkingPolicy, *v1alpha1.Corpus) {
	t.Helper()
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	c.Spec.Rollout = &v1alpha1.Rollout{Promotion: v1alpha1.PromotionManual}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	return p, c
}

func TestManualPromotionWaitsForTheAnnotation(t *testing.T) {
	ns := newNamespace(t)
	p, c := manualCorpus(t, ns)
	first := c.Status.ActiveRevision.Name
	second := changeChild(t, p, c, 100)
	waitCurrent(t, c, 30*time.Second)
	ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
	if c.Status.ActiveRevision.Name != first || c.Status.Candidate == nil || c.Status.Candidate.Name != second ||
		!strings.Contains(ready.Message, "awaits promotion") || c.Status.LastAppliedRevision != first {
		t.Fatalf("before the annotation: active %s candidate %+v applied %s, Ready %q", c.Status.ActiveRevision.Name, c.Status.Candidate, c.Status.LastAppliedRevision, ready.Message)
	}
	patch := client.MergeFrom(c.DeepCopy())
	c.Annotations = map[string]string{v1alpha1.PromoteAnnotation: second}
	if err := k8s.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the candidate to be promoted", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision.Name == second && c.Status.Candidate == nil && c.Status.LastAppliedRevision == second, nil
	})
}

func TestPinnedRevisionRollsBackWithoutReindexing(t *testing.T) {
	ns := newNamespace(t)
	p, c := readyCorpus(t, ns)
	newRetriever(t, ns, "ask", c.Name)
	first := c.Status.ActiveRevision.Name
	second := changeChild(t, p, c, 100)
	eventually(t, 30*time.Second, "the second revision to be active", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision.Name == second, nil
	})
	firstConfigMaps := len(revisionConfigMaps(t, c, first))
	get(t, c)
	c.Spec.Rollout = &v1alpha1.Rollout{PinnedRevision: first}
	if err := k8s.Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the pinned revision to be active and served", func() (bool, error) {
		get(t, c)
		var d appsv1.Deployment
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ask"}, &d); err != nil {
			return false, err
		}
		return c.Status.ActiveRevision.Name == first && d.Spec.Template.Annotations["parentrag.io/revision"] == first, nil
	})
	if c.Status.LastAttemptedRevision != second || c.Status.Candidate == nil || c.Status.Candidate.Name != second {
		t.Fatalf("the rollback rebuilt or forgot the latest revision: attempted %s candidate %+v", c.Status.LastAttemptedRevision, c.Status.Candidate)
	}
	if got := len(revisionConfigMaps(t, c, first)); got != firstConfigMaps || got == 0 {
		t.Fatalf("the pinned revision's ConfigMaps changed: %d, had %d", got, firstConfigMaps)
	}
	// A pin of a revision that is not retained stalls with a clear message.
	get(t, c)
	c.Spec.Rollout.PinnedRevision = "0123456789abcdef"
	if err := k8s.Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the missing pin to stall", func() (bool, error) {
		get(t, c)
		stalledCond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionStalled)
		return stalledCond != nil && stalledCond.Reason == v1alpha1.ReasonPinnedRevisionMissing && strings.Contains(stalledCond.Message, "is not retained"), nil
	})
	if c.Status.ActiveRevision.Name != first {
		t.Fatalf("a bad pin changed the active revision to %s", c.Status.ActiveRevision.Name)
	}
	// Without the field, the latest revision returns; the pin annotation
	// rolls back again.
	get(t, c)
	c.Spec.Rollout = nil
	if err := k8s.Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the latest revision to return", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision.Name == second, nil
	})
	patch := client.MergeFrom(c.DeepCopy())
	c.Annotations = map[string]string{v1alpha1.PinAnnotation: first}
	if err := k8s.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the annotation to pin the first revision", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision.Name == first && c.Status.Candidate != nil && c.Status.Candidate.Outcome == v1alpha1.OutcomeHeld, nil
	})
}
