package controllers

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=list

// deleteLabelled deletes the Jobs (with their pods, in the background),
// claims and ConfigMaps of a namespace that carry every one of labels,
// one by one: the operator lists and deletes, and holds no right to
// delete a whole collection. Objects already gone are no error.
func (r *CorpusReconciler) deleteLabelled(ctx context.Context, namespace string, labels map[string]string) error {
	for _, list := range []client.ObjectList{&batchv1.JobList{}, &corev1.PersistentVolumeClaimList{}, &corev1.ConfigMapList{}} {
		if err := r.reader().List(ctx, list, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
			return fmt.Errorf("listing %T: %w", list, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			obj := item.(client.Object)
			if err := r.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s %s: %w", kindOf(obj, r.Scheme()), obj.GetName(), err)
			}
		}
	}
	return nil
}
