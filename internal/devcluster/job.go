package devcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// jobControllers are the kube-controller-manager controllers
// StartJobWorkloads runs: StartWorkloads' two, the Job controller, and
// the binder that binds claims to the volumes the host-path provisioner
// creates.
const jobControllers = "deployment-controller,replicaset-controller,job-controller,persistentvolume-binder-controller"

// StartJobWorkloads is StartWorkloads for clusters that run Jobs and
// claims. kube-controller-manager also runs the Job controller and the
// PersistentVolume binder; claims of HostPathStorageClass are provisioned
// as directories on the host (StartHostPathProvisioner); kwok starts the
// pods of a Job but, unlike StartWorkloads' kwok, never completes them: a
// Job's pod stays Running until the caller, which runs its container on
// the host (RunPod), reports how it ended (ReportPodExit), as a kubelet
// would.
func (e *Env) StartJobWorkloads(ctx context.Context) error {
	stages, err := kwokStageFiles()
	if err != nil {
		return err
	}
	if err := e.startWorkloads(ctx, jobControllers, withoutStage(stages, "pod-complete.yaml")); err != nil {
		return err
	}
	return e.StartHostPathProvisioner(ctx)
}

// withoutStage drops the stage files with the given base name.
func withoutStage(files []string, base string) []string {
	var out []string
	for _, f := range files {
		if filepath.Base(f) != base {
			out = append(out, f)
		}
	}
	return out
}

// ReportPodExit records in the pod's status that its container ended with
// the exit's code, as the kubelet would: phase Succeeded on 0, Failed
// otherwise, the container terminated, the pod no longer Ready. The Job
// controller then counts the pod.
func (e *Env) ReportPodExit(ctx context.Context, pod *corev1.Pod, exit *PodExit) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var p corev1.Pod
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil {
			return err
		}
		phase, reason := corev1.PodSucceeded, "Completed"
		if exit.ExitCode != 0 {
			phase, reason = corev1.PodFailed, "Error"
		}
		now := metav1.Now()
		started := metav1.NewTime(now.Add(-exit.Wall))
		p.Status.Phase = phase
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: int32(exit.ExitCode), Reason: reason, StartedAt: started, FinishedAt: now,
				}},
			})
		}
		for i, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady || cond.Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status, p.Status.Conditions[i].Reason, p.Status.Conditions[i].LastTransitionTime = corev1.ConditionFalse, "PodCompleted", now
			}
		}
		return e.Client.Status().Update(ctx, &p)
	})
}

// WaitJobPod waits until the Job has a pod that kwok started (phase
// Running) and returns it. A pod waits for its claims to be bound before
// it is scheduled, so this also waits for the provisioner.
func (e *Env) WaitJobPod(ctx context.Context, namespace, job string, timeout time.Duration) (*corev1.Pod, error) {
	deadline := time.Now().Add(timeout)
	var last []string
	for time.Now().Before(deadline) {
		var pods corev1.PodList
		if err := e.Client.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{"batch.kubernetes.io/job-name": job}); err != nil {
			return nil, err
		}
		last = last[:0]
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				return p, nil
			}
			last = append(last, fmt.Sprintf("%s node=%q phase=%s conditions=%v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("no running pod of Job %s/%s after %s; pods:\n%s\nkube-scheduler:\n%s", namespace, job, timeout,
		strings.Join(last, "\n"), e.LogTail("kube-scheduler", 10))
}
