// Package kubetest holds what tests of parentrag against a real API server
// share.
package kubetest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kstatus computes an object's kstatus, as Flux's health checks and
// kubectl wait read it, from the object as given (read it first).
func Kstatus(scheme *runtime.Scheme, obj client.Object) (*status.Result, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	gvk, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return nil, fmt.Errorf("the kind of %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetGroupVersionKind(gvk[0])
	return status.Compute(u)
}
