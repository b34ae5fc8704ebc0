package controllers

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podTrouble is why a pod the operator created makes no progress, in
// Kubernetes' own words: the pod, the reason (ImagePullBackOff,
// Unschedulable, CrashLoopBackOff, ...) and its message.
type podTrouble struct {
	pod, reason, message string
}

// String reads as a condition message: "pod P: Reason: message".
func (t *podTrouble) String() string {
	if t.message == "" {
		return fmt.Sprintf("pod %s: %s", t.pod, t.reason)
	}
	return fmt.Sprintf("pod %s: %s: %s", t.pod, t.reason, t.message)
}

// stuckWaiting are the reasons a container waits that will not pass on
// their own, or only after back-off: a bad image, missing configuration,
// a crash loop. ContainerCreating and PodInitializing are not among them.
var stuckWaiting = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
	"CrashLoopBackOff": true,
}

// troubleOf says why a pod is stuck, or nil when it runs, has finished or
// is only starting: it cannot be scheduled (an unbound claim, too few
// resources, no matching node), or a container waits for a reason in
// stuckWaiting. Init containers are looked at first, as they run first.
func troubleOf(p *corev1.Pod) *podTrouble {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || !p.DeletionTimestamp.IsZero() {
		return nil
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return &podTrouble{pod: p.Name, reason: c.Reason, message: c.Message}
		}
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && stuckWaiting[w.Reason] {
			return &podTrouble{pod: p.Name, reason: w.Reason, message: withLastExit(w.Message, cs.LastTerminationState.Terminated)}
		}
	}
	return nil
}

// withLastExit adds how a crashed container last ended to its message.
func withLastExit(msg string, last *corev1.ContainerStateTerminated) string {
	if last == nil {
		return msg
	}
	exit := fmt.Sprintf("last exit code %d", last.ExitCode)
	if last.Reason != "" {
		exit += " (" + last.Reason + ")"
	}
	if msg == "" {
		return exit
	}
	return msg + "; " + exit
}

// started reports whether a container of the pod has run: it is running
// or has ended.
func started(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil {
			return true
		}
	}
	return false
}

// podsOf lists the pods in namespace with the given labels, by name.
func podsOf(ctx context.Context, r client.Reader, namespace string, labels map[string]string) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	return pods.Items, nil
}

// firstTrouble is the trouble of the first stuck pod, or nil.
func firstTrouble(pods []corev1.Pod) *podTrouble {
	for i := range pods {
		if t := troubleOf(&pods[i]); t != nil {
			return t
		}
	}
	return nil
}
