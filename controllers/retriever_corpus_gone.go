package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// scaleToZero handles a Retriever whose Corpus does not exist or is being
// deleted. A deleted Corpus's revisions go once no query pod runs, so a
// query Deployment that exists is scaled to zero (no pod is left to
// restart into a revision that is gone), and the status says so. The
// Deployment scales back up when the Corpus exists again and has an
// active revision.
func (r *RetrieverReconciler) scaleToZero(ctx context.Context, s *retrieverState, deleting bool) error {
	rt := s.retriever
	corpus := rt.Spec.CorpusRef.Name
	s.reason, s.message = v1alpha1.ReasonCorpusNotFound, fmt.Sprintf("Corpus %s not found", corpus)
	if deleting {
		s.reason, s.message = v1alpha1.ReasonCorpusDeleted, fmt.Sprintf("Corpus %s is being deleted", corpus)
	}
	var d appsv1.Deployment
	err := r.Get(ctx, client.ObjectKeyFromObject(rt), &d)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Deployment: %w", err)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas > 0 {
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Replicas = ptr.To(int32(0))
		if err := r.Patch(ctx, &d, patch, client.FieldOwner(FieldManager)); err != nil {
			return fmt.Errorf("scaling the query Deployment to zero: %w", err)
		}
		r.Recorder.Eventf(rt, nil, corev1.EventTypeWarning, s.reason, "ScaleDown",
			"%s: scaled the query Deployment to 0 replicas", s.message)
	}
	s.message += ": the query Deployment is scaled to 0 replicas; it serves again once the Corpus exists and has an active revision"
	if s.loaded, err = loadedRevisions(ctx, r.Client, rt.Namespace, rt.Name); err != nil {
		return err
	}
	rt.Status.LoadedRevisions = s.loaded
	rt.Status.Replicas, rt.Status.ReadyReplicas = d.Status.Replicas, d.Status.ReadyReplicas
	return nil
}
