package controllers_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/controllers"
)

// TestOwnImage reads the image of the operator's container from its pod as
// the API server holds it: the container named manager among several, or
// the only one; outside a pod it says to give --image.
func TestOwnImage(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	pod := func(name string, containers ...corev1.Container) string {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{Containers: containers}}
		if err := k8s.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		return name
	}
	sidecar := corev1.Container{Name: "proxy", Image: "registry.example/proxy:1"}
	manager := corev1.Container{Name: controllers.ManagerContainer, Image: "registry.example/parentrag:v1.2.3"}
	for _, tc := range []struct {
		pod, want string
	}{
		{pod("with-sidecar", sidecar, manager), "registry.example/parentrag:v1.2.3"},
		{pod("renamed", corev1.Container{Name: "operator", Image: "registry.example/parentrag@sha256:0123"}), "registry.example/parentrag@sha256:0123"},
	} {
		got, err := controllers.OwnImage(ctx, k8s, ns, tc.pod)
		if err != nil || got != tc.want {
			t.Errorf("OwnImage(%s) = %q, %v; want %q", tc.pod, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		ns, pod, want string
	}{
		{"", "", "--image"},
		{ns, "missing", "reading the operator's own pod"},
		{ns, pod("two-others", sidecar, corev1.Container{Name: "other", Image: "x"}), `no container named "manager"`},
	} {
		if _, err := controllers.OwnImage(ctx, k8s, tc.ns, tc.pod); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OwnImage(%q, %q) error = %v, want one that says %q", tc.ns, tc.pod, err, tc.want)
		}
	}
}
