package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/milvustest"
)

// goldenQueries are questions about sampleDocs, one per document.
const goldenQueries = `{"query": "magma eruptions", "docIds": ["volcanoes"]}
{"query": "lunar gravity and tides", "docIds": ["tides"]}
{"query": "yeast fermentation", "answers": ["yeast fermentation works in practice"]}
`

// newGolden creates a ConfigMap of golden queries.
func newGolden(t *testing.T, ns, data string) string {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uniqueName("golden")}, Data: map[string]string{"queries.jsonl": data}}
	if err := k8s.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	return cm.Name
}

// gatedCorpus is a Corpus of sampleDocs with a quality gate.
func gatedCorpus(ns, policy, golden string, gate v1alpha1.QualityGate) *v1alpha1.Corpus {
	c := inlineCorpus(ns, policy, sampleDocs()...)
	gate.GoldenQueries = v1alpha1.ConfigMapKeyReference{Name: golden}
	c.Spec.Rollout = &v1alpha1.Rollout{QualityGate: &gate}
	return c
}

// condition returns a condition of the Corpus, or an empty one.
func condition(c *v1alpha1.Corpus, typ string) metav1.Condition {
	return conditionOf(c.Status.Conditions, typ)
}

// conditionOf returns a condition, or an empty one.
func conditionOf(conds []metav1.Condition, typ string) metav1.Condition {
	if cond := meta.FindStatusCondition(conds, typ); cond != nil {
		return *cond
	}
	return metav1.Condition{}
}

// hasEvent reports whether an event with the reason was recorded for the
// object.
func hasEvent(t *testing.T, obj client.Object, reason string) bool {
	t.Helper()
	var list corev1.EventList
	if err := k8s.List(context.Background(), &list, client.InNamespace(obj.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.InvolvedObject.Name == obj.GetName() && e.Reason == reason {
			return true
		}
	}
	return false
}

func TestQualityGateFailureKeepsTheActiveRevision(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := gatedCorpus(ns, p.Name, newGolden(t, ns, goldenQueries), v1alpha1.QualityGate{MinHitRate: "0.6", MaxDrop: "0.1"})
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	newRetriever(t, ns, "ask", c.Name)
	waitCurrent(t, c, 60*time.Second)
	first := c.Status.ActiveRevision
	if g := first.QualityGate; g == nil || g.Result != v1alpha1.CheckPassed || g.CandidateHitRate != "1.000" || g.Queries != 3 {
		t.Fatalf("the first revision's gate: %+v", first.QualityGate)
	}
	if v := first.Verification; v == nil || v.Result != v1alpha1.CheckPassed || v.Children != first.Children || v.SampledQueries == 0 {
		t.Fatalf("the first revision's verification: %+v", first.Verification)
	}
	// Dropping the tides document loses one golden query in three: a drop
	// of 0.333 against a limit of 0.1.
	get(t, c)
	c.Spec.Sources[0].Inline = []v1alpha1.InlineDocument{sampleDocs()[0], sampleDocs()[2]}
	if err := k8s.Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the gate to fail", func() (bool, error) {
		get(t, c)
		return condition(c, v1alpha1.ConditionStalled).Reason == v1alpha1.ReasonQualityGateFailed, nil
	})
	cand := c.Status.Candidate
	if c.Status.ActiveRevision.Name != first.Name || cand == nil || cand.Outcome != v1alpha1.OutcomeFailed || cand.QualityGate == nil {
		t.Fatalf("after a failed gate: active %s candidate %+v", c.Status.ActiveRevision.Name, cand)
	}
	g := cand.QualityGate
	if g.CandidateHitRate != "0.667" || g.ActiveHitRate != "1.000" || g.ActiveRevision != first.Name || len(g.Misses) != 1 || g.Misses[0] != "lunar gravity and tides" {
		t.Fatalf("gate status %+v", g)
	}
	ready := condition(c, v1alpha1.ConditionReady)
	if ready.Status != metav1.ConditionFalse || !contains(ready.Message, "failed the quality gate") || !contains(ready.Message, first.Name+" keeps serving") {
		t.Fatalf("Ready %+v", ready)
	}
	if c.Status.ObservedGeneration != c.Generation || kstatusOf(t, c).Status != "Failed" {
		t.Fatalf("a failed gate must be a settled failure for kstatus: observed %d of %d, %s", c.Status.ObservedGeneration, c.Generation, kstatusOf(t, c).Status)
	}
	if !hasEvent(t, c, v1alpha1.ReasonQualityGateFailed) {
		t.Fatal("no QualityGateFailed event")
	}
	var d appsv1.Deployment
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ask"}, &d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Annotations["parentrag.io/revision"]; got != first.Name {
		t.Fatalf("the Retriever moved to %s after a failed gate", got)
	}
	// Restoring the document returns to the first revision, Ready again.
	get(t, c)
	c.Spec.Sources[0].Inline = sampleDocs()
	if err := k8s.Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 30*time.Second)
	if c.Status.ActiveRevision.Name != first.Name || c.Status.Candidate != nil {
		t.Fatalf("after the fix: active %s candidate %+v", c.Status.ActiveRevision.Name, c.Status.Candidate)
	}
}

func TestInconclusiveQualityGatePausesUntilPromoted(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	// Three golden queries cannot satisfy a minimum of five.
	c := gatedCorpus(ns, p.Name, newGolden(t, ns, goldenQueries), v1alpha1.QualityGate{MinQueries: 5})
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	first := c.Status.ActiveRevision.Name // nothing to protect yet: promoted
	second := changeChild(t, p, c, 100)
	waitCurrent(t, c, 30*time.Second)
	cand := c.Status.Candidate
	ready := condition(c, v1alpha1.ConditionReady)
	if c.Status.ActiveRevision.Name != first || cand == nil || cand.Name != second || cand.Outcome != v1alpha1.OutcomePaused ||
		cand.QualityGate == nil || cand.QualityGate.Result != v1alpha1.CheckInconclusive || !contains(ready.Message, "inconclusive") {
		t.Fatalf("not paused: active %s candidate %+v Ready %q", c.Status.ActiveRevision.Name, cand, ready.Message)
	}
	if !hasEvent(t, c, v1alpha1.ReasonQualityGateInconclusive) {
		t.Fatal("no QualityGateInconclusive event")
	}
	patch := client.MergeFrom(c.DeepCopy())
	c.Annotations = map[string]string{v1alpha1.PromoteAnnotation: second}
	if err := k8s.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the paused candidate to be promoted", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision.Name == second && c.Status.Candidate == nil, nil
	})
	h := c.Status.History
	if len(h) != 2 || h[0].Outcome != v1alpha1.OutcomeActive || h[0].PromotedAt == nil || h[1].Name != first || h[1].Outcome != v1alpha1.OutcomeSuperseded || h[1].SupersededAt == nil {
		t.Fatalf("history %+v", h)
	}
}

func TestVerificationCountMismatchIsNotPromoted(t *testing.T) {
	srv := milvustest.Start(t)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := milvusCorpus(ns, p.Name, srv.Addr())
	c.Spec.Rollout = &v1alpha1.Rollout{Promotion: v1alpha1.PromotionManual}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	first := c.Status.ActiveRevision.Name
	second := changeChild(t, p, c, 100)
	waitCurrent(t, c, 30*time.Second)
	if v := c.Status.Candidate.Verification; v == nil || v.Result != v1alpha1.CheckPassed {
		t.Fatalf("the candidate was not verified before it waits: %+v", c.Status.Candidate)
	}
	// Rows of the candidate's collection go missing while it waits; the
	// promotion verifies it again and refuses it.
	cli, err := milvusclient.New(context.Background(), &milvusclient.ClientConfig{Address: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close(context.Background())
	if _, err := cli.Delete(context.Background(), milvusclient.NewDeleteOption(c.MilvusCollection(second)).WithExpr("ordinal == 0")); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(c.DeepCopy())
	c.Annotations = map[string]string{v1alpha1.PromoteAnnotation: second}
	if err := k8s.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "verification to fail", func() (bool, error) {
		get(t, c)
		return condition(c, v1alpha1.ConditionStalled).Reason == v1alpha1.ReasonVerificationFailed, nil
	})
	v := c.Status.Candidate.Verification
	if c.Status.ActiveRevision.Name != first || c.Status.Candidate.Outcome != v1alpha1.OutcomeFailed || !strings.Contains(v.Message, "children, the manifest says") {
		t.Fatalf("after the mismatch: active %s candidate %+v verification %+v", c.Status.ActiveRevision.Name, c.Status.Candidate, v)
	}
	if srv.Aliases()[c.MilvusAlias()] != c.MilvusCollection(first) {
		t.Fatalf("the alias left the active collection: %v", srv.Aliases())
	}
	if !hasEvent(t, c, v1alpha1.ReasonVerificationFailed) {
		t.Fatal("no VerificationFailed event")
	}
}

func TestCandidateTrackPreviewsTheCandidate(t *testing.T) {
	ns := newNamespace(t)
	p, c := manualCorpus(t, ns)
	first := c.Status.ActiveRevision.Name
	newRetriever(t, ns, "stable", c.Name)
	preview := &v1alpha1.Retriever{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "preview"},
		Spec:       v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name}, Track: v1alpha1.TrackCandidate},
	}
	if err := k8s.Create(context.Background(), preview); err != nil {
		t.Fatal(err)
	}
	templateRevision := func(name string) string {
		var d appsv1.Deployment
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
			return ""
		}
		return d.Spec.Template.Annotations["parentrag.io/revision"]
	}
	eventually(t, 30*time.Second, "both Retrievers on the active revision without a candidate", func() (bool, error) {
		return templateRevision("stable") == first && templateRevision("preview") == first, nil
	})
	second := changeChild(t, p, c, 100)
	eventually(t, 30*time.Second, "the preview on the candidate, the stable Retriever on the active revision", func() (bool, error) {
		return templateRevision("preview") == second && templateRevision("stable") == first, nil
	})
}
