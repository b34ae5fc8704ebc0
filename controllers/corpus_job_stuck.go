package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// FailureAnno on an indexing Job says why the operator failed it: its pod
// did not start before the Corpus's start deadline. The Job is suspended,
// so that Kubernetes stops its pods.
const FailureAnno = "parentrag.io/failure"

// jobNameLabel is the label the Job controller puts on a Job's pods.
const jobNameLabel = "batch.kubernetes.io/job-name"

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=patch

// checkJobPods looks at the pods of a running indexing Job. A stuck pod
// (unschedulable, an image that cannot be pulled, a container that cannot
// be created) is reported in the conditions with Kubernetes' reason and
// message. When no pod of the Job has started by the Corpus's start
// deadline, the build fails: the Job is suspended with the cause, and the
// active revision keeps serving. It returns the error of a failed build,
// or nil while the Job may still run.
func (r *CorpusReconciler) checkJobPods(ctx context.Context, s *corpusState, job *batchv1.Job) error {
	pods, err := podsOf(ctx, r.Client, job.Namespace, map[string]string{jobNameLabel: job.Name})
	if err != nil {
		return err
	}
	trouble := firstTrouble(pods)
	if trouble == nil {
		return nil
	}
	deadline := job.CreationTimestamp.Add(s.corpus.StartDeadline())
	if anyStarted(pods) || job.Status.Failed > 0 {
		s.reason, s.message = v1alpha1.ReasonPodNotRunning, fmt.Sprintf("indexing Job %s is stuck: %s", job.Name, trouble)
		return nil
	}
	if time.Now().Before(deadline) {
		s.reason = v1alpha1.ReasonPodNotRunning
		s.message = fmt.Sprintf("indexing Job %s cannot start: %s; the build fails at %s (indexing.startDeadlineSeconds) unless it starts",
			job.Name, trouble, deadline.UTC().Format(time.RFC3339))
		return nil
	}
	msg := fmt.Sprintf("its pod did not start within %s (indexing.startDeadlineSeconds): %s", s.corpus.StartDeadline(), trouble)
	if err := r.failJob(ctx, job, msg); err != nil {
		return err
	}
	return r.jobFailed(ctx, s, job, nil)
}

// failJob suspends a Job, which stops its pods, and records why in
// FailureAnno, which makes it a failed build from then on.
func (r *CorpusReconciler) failJob(ctx context.Context, job *batchv1.Job, msg string) error {
	patch := map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{FailureAnno: msg}},
		"spec":     map[string]any{"suspend": true},
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, job, client.RawPatch(types.MergePatchType, raw)); err != nil {
		return fmt.Errorf("failing indexing Job %s: %w", job.Name, err)
	}
	return nil
}

// anyStarted reports whether a container of any of the pods has run.
func anyStarted(pods []corev1.Pod) bool {
	for i := range pods {
		if started(&pods[i]) {
			return true
		}
	}
	return false
}
