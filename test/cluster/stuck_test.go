//go:build cluster

package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// TestStuckBuildsSayWhyAndFailAtTheDeadline serves the claims sample, then
// asks for new revisions whose indexing pods cannot start on this cluster:
// first one that asks for more CPU than the node has, then one whose image
// cannot be pulled. Each cause is in the Corpus's conditions within a
// minute, in the kubelet's and scheduler's own words; the second fails at
// its start deadline, and the Service answers from the serving revision
// throughout.
func TestStuckBuildsSayWhyAndFailAtTheDeadline(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "stuck")
	applyKustomization(t, "config/samples", ns)
	applyKustomization(t, "config/samples/claims", ns)
	c, r := waitSamplesReady(t, ns)
	serving := c.Status.ActiveRevision.Name
	e := endpointOf(t, ns, r.Name)
	e.waitAnswering(t)

	patchCorpus(t, c, func(c *v1alpha1.Corpus) {
		c.Spec.ChunkingPolicyRef.Name = "parentrag-sample-handbook-fine"
		c.Spec.Indexing = &v1alpha1.Indexing{StartDeadlineSeconds: ptrTo[int64](30), Resources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}}}
	})
	start := time.Now()
	waitReconcilingBecause(t, c, "Unschedulable")
	t.Logf("unschedulable pod reported after %.1fs: %s", time.Since(start).Seconds(), condition(c, v1alpha1.ConditionReconciling).Message)

	patchCorpus(t, c, func(c *v1alpha1.Corpus) {
		c.Spec.ChunkingPolicyRef.Name = "parentrag-sample-tokens"
		c.Spec.Indexing = &v1alpha1.Indexing{StartDeadlineSeconds: ptrTo[int64](30), Image: "registry.invalid/parentrag:missing"}
	})
	start = time.Now()
	waitReconcilingBecause(t, c, "ErrImagePull", "ImagePullBackOff")
	t.Logf("image pull failure reported after %.1fs: %s", time.Since(start).Seconds(), condition(c, v1alpha1.ConditionReconciling).Message)
	eventually(t, 2*time.Minute, "the build to fail at its start deadline", func() (bool, error) {
		get(t, c)
		return condition(c, v1alpha1.ConditionStalled).Reason == v1alpha1.ReasonIndexFailed, nil
	})
	msg := condition(c, v1alpha1.ConditionStalled).Message
	if !strings.Contains(msg, "did not start within 30s") || c.Status.ActiveRevision.Name != serving || c.Status.LastBuild.Result != "Failed" {
		t.Fatalf("after the deadline: Stalled %q, active %s (want %s), last build %+v", msg, c.Status.ActiveRevision.Name, serving, c.Status.LastBuild)
	}
	t.Logf("failed %.1fs after the Job was asked for: %s", time.Since(start).Seconds(), msg)
	resp, err := e.retrieve(ctx, docsQuestions[0], 3)
	if err != nil || resp.Revision != serving || len(resp.Results) == 0 {
		t.Fatalf("query through the Service after the failed build: %+v, %v; want revision %s", resp, err, serving)
	}
}

// waitReconcilingBecause waits until the Corpus's Reconciling condition
// names a stuck pod with one of the reasons.
func waitReconcilingBecause(t *testing.T, c *v1alpha1.Corpus, reasons ...string) {
	t.Helper()
	eventually(t, time.Minute, "the Corpus to say why its Job cannot start", func() (bool, error) {
		get(t, c)
		cond := condition(c, v1alpha1.ConditionReconciling)
		for _, r := range reasons {
			if cond.Reason == v1alpha1.ReasonPodNotRunning && strings.Contains(cond.Message, ": "+r+":") {
				return true, nil
			}
		}
		return false, nil
	})
}

// condition returns a condition of the Corpus, or an empty one.
func condition(c *v1alpha1.Corpus, typ string) metav1.Condition {
	for _, cond := range c.Status.Conditions {
		if cond.Type == typ {
			return cond
		}
	}
	return metav1.Condition{}
}
