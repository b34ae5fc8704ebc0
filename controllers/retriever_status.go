package controllers

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// summarize writes the Retriever's conditions: Suspended in Ready while
// spec.suspend holds it (observedGeneration stays), Ready once every replica
// serves the Corpus's active revision, Reconciling while the Deployment
// rolls out or the Corpus is not ready, Stalled when its replicas cannot
// mount the Corpus's claims.
func (r *RetrieverReconciler) summarize(s *retrieverState, result ctrl.Result, err error) {
	rt := s.retriever
	gen := rt.Generation
	if s.suspended {
		msg := suspendedMessage(gen, rt.Status.ObservedGeneration)
		if rt.Status.ServingRevision != "" {
			msg += "; its pods keep serving revision " + rt.Status.ServingRevision
		}
		markSuspended(&rt.Status.Conditions, gen, msg)
		return
	}
	switch {
	case err != nil && isStalled(err):
		markStalled(&rt.Status.Conditions, gen, orDefault(stallReason(err), v1alpha1.ReasonProgressing), stalledMessage(err))
	case err != nil:
		markNotReady(&rt.Status.Conditions, gen, v1alpha1.ReasonProgressing, stalledMessage(err))
	case !result.IsZero():
		markNotReady(&rt.Status.Conditions, gen, s.reason, s.message)
	case s.deployment != nil && rolledOut(s.deployment):
		markReady(&rt.Status.Conditions, gen, fmt.Sprintf("%d/%d replicas serve revision %s", rt.Status.ReadyReplicas, rt.GetReplicas(), s.revision))
	case s.trouble != nil && progressDeadlineExceeded(s.deployment):
		msg := fmt.Sprintf("rollout of revision %s made no progress within the Deployment's progress deadline: %s; the pods that ran before keep serving", s.revision, s.trouble)
		markStalled(&rt.Status.Conditions, gen, v1alpha1.ReasonPodNotRunning, msg)
	case s.trouble != nil:
		msg := fmt.Sprintf("rolling out revision %s: %d/%d replicas updated and ready; %s", s.revision, rt.Status.ReadyReplicas, rt.GetReplicas(), s.trouble)
		markReconciling(&rt.Status.Conditions, gen, v1alpha1.ReasonPodNotRunning, msg, false)
	default:
		msg := fmt.Sprintf("rolling out revision %s: %d/%d replicas updated and ready", s.revision, rt.Status.ReadyReplicas, rt.GetReplicas())
		markReconciling(&rt.Status.Conditions, gen, v1alpha1.ReasonRollingOut, msg, false)
	}
	if settled(rt.Status.Conditions) {
		rt.Status.ObservedGeneration = gen
	}
	if v, ok := rt.Annotations[ReconcileAtAnno]; ok {
		rt.Status.LastHandledReconcileAt = v
	}
}

// progressDeadlineExceeded reports whether the Deployment controller gave
// up waiting for the rollout (Progressing False, ProgressDeadlineExceeded).
func progressDeadlineExceeded(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return true
		}
	}
	return false
}
