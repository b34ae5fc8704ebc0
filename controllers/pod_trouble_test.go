package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTroubleOf(t *testing.T) {
	waiting := func(reason, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
	}
	crashed := waiting("CrashLoopBackOff", "back-off 40s restarting failed container=index")
	crashed.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}
	unschedulable := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/1 nodes are available: 1 Insufficient cpu."}
	for _, tc := range []struct {
		name   string
		status corev1.PodStatus
		want   string // "" for no trouble
	}{
		{"creating", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{waiting("ContainerCreating", "")}}, ""},
		{"running", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}, ""},
		{"image", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{waiting("ImagePullBackOff", `Back-off pulling image "x"`)}},
			`pod p: ImagePullBackOff: Back-off pulling image "x"`},
		{"unschedulable", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{unschedulable}},
			"pod p: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu."},
		{"crash loop", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{crashed}},
			"pod p: CrashLoopBackOff: back-off 40s restarting failed container=index; last exit code 2 (Error)"},
		{"init container first", corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{waiting("CreateContainerConfigError", `secret "s" not found`)},
			ContainerStatuses: []corev1.ContainerStatus{waiting("PodInitializing", "")}}, `pod p: CreateContainerConfigError: secret "s" not found`},
		{"failed pods are the Job's to count", corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{crashed}}, ""},
	} {
		got := troubleOf(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: tc.status})
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: trouble %q, want none", tc.name, got)
		case tc.want != "" && (got == nil || got.String() != tc.want):
			t.Errorf("%s: trouble %v, want %q", tc.name, got, tc.want)
		}
	}
}
