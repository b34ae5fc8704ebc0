package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ManagerContainer is the name of the operator's container in its pod
// (config/manager).
const ManagerContainer = "manager"

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// OwnImage returns the image the operator's own container runs, read from
// its pod (namespace and name from the downward API), so that query pods
// and indexing Jobs run exactly the image the operator was deployed with,
// however it was set (kustomize images:, kustomize edit set image, an
// edited Deployment). It takes the container named ManagerContainer, or
// the pod's only container.
func OwnImage(ctx context.Context, r client.Reader, namespace, name string) (string, error) {
	if namespace == "" || name == "" {
		return "", fmt.Errorf("POD_NAMESPACE and POD_NAME are not set: the operator runs outside a pod, so give the image of query pods and indexing Jobs with --image")
	}
	var pod corev1.Pod
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &pod); err != nil {
		return "", fmt.Errorf("reading the operator's own pod %s/%s for its image: %w", namespace, name, err)
	}
	containers := pod.Spec.Containers
	for _, c := range containers {
		if c.Name == ManagerContainer {
			return c.Image, nil
		}
	}
	if len(containers) == 1 {
		return containers[0].Image, nil
	}
	return "", fmt.Errorf("the operator's pod %s/%s has no container named %q: give the image of query pods and indexing Jobs with --image", namespace, name, ManagerContainer)
}
