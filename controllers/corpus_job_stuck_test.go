package controllers_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
)

// stuckPod creates a pod from a template as the Job or ReplicaSet
// controller would, then gives it the status a kubelet reports for a
// container whose image cannot be pulled.
func stuckPod(t *testing.T, ns, name string, tmpl corev1.PodTemplateSpec, extra map[string]string) {
	t.Helper()
	labels := maps.Clone(tmpl.Labels)
	maps.Copy(labels, extra)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: tmpl.Spec}
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: tmpl.Spec.Containers[0].Name, Image: tmpl.Spec.Containers[0].Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
			Message: `Back-off pulling image "registry.invalid/parentrag:nope"`}},
	}}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// TestAStuckIndexingJobSaysWhyAndFailsAtItsDeadline: the pod of a new
// revision's Job cannot pull its image. The Corpus says so at once, with
// the pod's reason and message, and fails the build at the start deadline
// while the active revision keeps serving; the Job is suspended so that
// Kubernetes stops its pods.
func TestAStuckIndexingJobSaysWhyAndFailsAtItsDeadline(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := claimCorpus(ns, p.Name)
	c.Spec.Indexing.StartDeadlineSeconds = ptr.To[int64](30)
	first := createAndWaitJob(t, c)
	if err := runIndexer(t, c, first, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 30*time.Second)
	active := c.Status.ActiveRevision.Name

	// A changed document calls for a new revision, whose pod is stuck.
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.Sources[0].Inline[0].Text += "\n\nAnother paragraph about volcanoes."
	if err := k8s.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	eventually(t, 30*time.Second, "the second indexing Job", func() (bool, error) {
		get(t, c)
		rev := c.Status.LastAttemptedRevision
		if rev == active {
			return false, nil
		}
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.RevisionObjectName(rev) + "-index"}, &job)
		return err == nil, err
	})
	stuckPod(t, ns, job.Name+"-x7k2p", job.Spec.Template, map[string]string{"batch.kubernetes.io/job-name": job.Name})
	eventually(t, 15*time.Second, "the Corpus to say why the Job cannot start", func() (bool, error) {
		get(t, c)
		r := condition(c, v1alpha1.ConditionReconciling)
		return r.Reason == v1alpha1.ReasonPodNotRunning && strings.Contains(r.Message, `ImagePullBackOff: Back-off pulling image "registry.invalid/parentrag:nope"`) &&
			strings.Contains(r.Message, "startDeadlineSeconds"), nil
	})
	if ready := condition(c, v1alpha1.ConditionReady); ready.Status != metav1.ConditionTrue || c.Status.ActiveRevision.Name != active {
		t.Fatalf("while the new revision waits, revision %s must stay active and Ready: %+v", active, ready)
	}
	eventually(t, 45*time.Second, "the build to fail at the deadline", func() (bool, error) {
		get(t, c)
		return condition(c, v1alpha1.ConditionStalled).Reason == v1alpha1.ReasonIndexFailed, nil
	})
	msg := condition(c, v1alpha1.ConditionStalled).Message
	if !strings.Contains(msg, "did not start within 30s") || !strings.Contains(msg, "ImagePullBackOff") ||
		!strings.Contains(msg, "revision "+active+" keeps serving") || c.Status.ActiveRevision.Name != active || c.Status.LastBuild.Result != "Failed" {
		t.Fatalf("after the deadline: Stalled %q, active %s, last build %+v", msg, c.Status.ActiveRevision.Name, c.Status.LastBuild)
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(&job), &job); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(job.Spec.Suspend, false) || !strings.Contains(job.Annotations[controllers.FailureAnno], "ImagePullBackOff") {
		t.Fatalf("the failed Job must be suspended with its cause: suspend %v, annotations %v", job.Spec.Suspend, job.Annotations)
	}
}

// TestAStuckQueryPodIsReported: a query pod that cannot pull its image is
// named in the Retriever's conditions, and the Retriever stalls once the
// Deployment controller gives up on the rollout.
func TestAStuckQueryPodIsReported(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 30*time.Second)
	rt := newRetriever(t, ns, "ask", c.Name)
	var d appsv1.Deployment
	eventually(t, 30*time.Second, "the Deployment", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rt), &d)
		return err == nil, err
	})
	stuckPod(t, ns, d.Name+"-5d8f9-abcde", d.Spec.Template, nil)
	eventually(t, 15*time.Second, "the Retriever to name the stuck pod", func() (bool, error) {
		get(t, rt)
		r := conditionOf(rt.Status.Conditions, v1alpha1.ConditionReconciling)
		return r.Reason == v1alpha1.ReasonPodNotRunning && strings.Contains(r.Message, "ImagePullBackOff"), nil
	})
	// What the Deployment controller writes at its progress deadline.
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
		Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "ask-5d8f9" has timed out progressing.`}}
	if err := k8s.Status().Update(context.Background(), &d); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the Retriever to stall", func() (bool, error) {
		get(t, rt)
		s := conditionOf(rt.Status.Conditions, v1alpha1.ConditionStalled)
		return s.Reason == v1alpha1.ReasonPodNotRunning && strings.Contains(s.Message, "progress deadline") && strings.Contains(s.Message, "ImagePullBackOff"), nil
	})
}
