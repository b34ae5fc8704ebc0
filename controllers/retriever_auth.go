package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// A Retriever in Kubernetes auth mode has its query pods ask the API
// server about each caller (TokenReview, SubjectAccessReview). Both are
// cluster-scoped, so only a ClusterRoleBinding can grant them: one per
// such Retriever, to the built-in ClusterRole system:auth-delegator, which
// allows exactly those two creates. The operator may bind that ClusterRole
// and no other (bind with resourceNames), and create, patch and delete
// ClusterRoleBindings; it never reads them. A cluster-scoped binding
// cannot be owned by a namespaced Retriever, so the finalizer below
// deletes it, when the Retriever goes or leaves Kubernetes mode.
//
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterrolebindings,verbs=create;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=system:auth-delegator

// RetrieverAuthFinalizer deletes a Retriever's auth-delegator
// ClusterRoleBinding before the Retriever goes.
const RetrieverAuthFinalizer = "parentrag.io/retriever-auth"

// Where the auth settings reach the query pods.
const (
	authDelegatorRole = "system:auth-delegator"
	authTokenVolume   = "auth-tokens"
	// AuthTokenDir is where the Secret of a BearerToken Retriever is
	// mounted in its query pods.
	AuthTokenDir = "/etc/parentrag/auth-tokens"
	// labelRetrieverNamespace tells, on a cluster-scoped object, the
	// namespace of the Retriever it belongs to.
	labelRetrieverNamespace = "parentrag.io/retriever-namespace"
)

// AuthDelegatorBindingName is the name of the ClusterRoleBinding that lets
// a Kubernetes-mode Retriever's pods review tokens and access. Namespace
// and name hold no colon, so no two Retrievers share one.
func AuthDelegatorBindingName(r *v1alpha1.Retriever) string {
	return "parentrag:retriever-auth:" + r.Namespace + ":" + r.Name
}

// authArgs are the query server's auth flags for the Retriever's mode;
// none in mode None.
func authArgs(r *v1alpha1.Retriever) []string {
	switch r.GetAuthMode() {
	case v1alpha1.AuthBearerToken:
		return []string{"--auth=bearer", "--auth-token-dir=" + AuthTokenDir}
	case v1alpha1.AuthKubernetes:
		return []string{"--auth=kubernetes", "--auth-retriever=" + r.Namespace + "/" + r.Name}
	}
	return nil
}

// authVolumes are the pod's volumes for its auth mode: the token Secret
// in mode BearerToken, its files readable by the server's non-root user
// (the Secret's default mode). The Secret is not optional, so a pod never
// starts without the tokens it must check.
func (p *queryPlan) authVolumes() []*corev1ac.VolumeApplyConfiguration {
	secret := p.retriever.GetAuthSecretName()
	if secret == "" {
		return nil
	}
	return []*corev1ac.VolumeApplyConfiguration{corev1ac.Volume().WithName(authTokenVolume).
		WithSecret(corev1ac.SecretVolumeSource().WithSecretName(secret))}
}

// authMounts mount the authVolumes read-only.
func (p *queryPlan) authMounts() []*corev1ac.VolumeMountApplyConfiguration {
	if p.retriever.GetAuthSecretName() == "" {
		return nil
	}
	return []*corev1ac.VolumeMountApplyConfiguration{corev1ac.VolumeMount().
		WithName(authTokenVolume).WithMountPath(AuthTokenDir).WithReadOnly(true)}
}

// authObjects are the objects the auth mode needs beyond the pod: the
// auth-delegator binding in mode Kubernetes.
func (p *queryPlan) authObjects() []runtime.ApplyConfiguration {
	if p.retriever.GetAuthMode() != v1alpha1.AuthKubernetes {
		return nil
	}
	rt := p.retriever
	labels := p.labels()
	labels[labelRetrieverNamespace] = rt.Namespace
	return []runtime.ApplyConfiguration{rbacv1ac.ClusterRoleBinding(AuthDelegatorBindingName(rt)).
		WithLabels(labels).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(authDelegatorRole)).
		WithSubjects(rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(rt.Name).WithNamespace(rt.Namespace))}
}

// waitForAuthSecret waits, Ready=False with reason AuthSecretNotReady,
// while a BearerToken Retriever's Secret does not exist or holds no key:
// pods would not start without it, or would refuse every caller. The
// Deployment is left as it is meanwhile.
func (r *RetrieverReconciler) waitForAuthSecret(ctx context.Context, s *retrieverState) (ctrl.Result, error) {
	rt := s.retriever
	name := rt.GetAuthSecretName()
	if name == "" {
		return ctrl.Result{}, nil
	}
	var secret corev1.Secret
	err := r.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: name}, &secret)
	switch {
	case apierrors.IsNotFound(err):
		s.message = fmt.Sprintf("Secret %s of auth.secretRef does not exist: create it with one accepted token in each key", name)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading Secret %s of auth.secretRef: %w", name, err)
	case len(secret.Data) == 0:
		s.message = fmt.Sprintf("Secret %s of auth.secretRef holds no key: put one accepted token in each key", name)
	default:
		return ctrl.Result{}, nil
	}
	s.reason = v1alpha1.ReasonAuthSecretNotReady
	return ctrl.Result{RequeueAfter: waitInterval}, nil
}

// syncAuthFinalizer makes the finalizer match the mode before anything is
// applied: a Kubernetes-mode Retriever holds it before its binding
// exists, so the binding never outlives it; one in another mode has its
// binding deleted and the finalizer dropped. rt itself is not changed.
func (r *RetrieverReconciler) syncAuthFinalizer(ctx context.Context, rt *v1alpha1.Retriever) error {
	if rt.GetAuthMode() != v1alpha1.AuthKubernetes {
		return r.releaseAuthBinding(ctx, rt)
	}
	if controllerutil.ContainsFinalizer(rt, RetrieverAuthFinalizer) {
		return nil
	}
	return r.patchFinalizers(ctx, rt, func(o client.Object) { controllerutil.AddFinalizer(o, RetrieverAuthFinalizer) })
}

// releaseAuthBinding deletes the Retriever's auth-delegator binding, if
// any, then drops the finalizer. It does nothing without the finalizer:
// the binding was never made or is already gone.
func (r *RetrieverReconciler) releaseAuthBinding(ctx context.Context, rt *v1alpha1.Retriever) error {
	if !controllerutil.ContainsFinalizer(rt, RetrieverAuthFinalizer) {
		return nil
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: AuthDelegatorBindingName(rt)}}
	if err := r.Delete(ctx, binding); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting ClusterRoleBinding %s: %w", binding.Name, err)
	}
	return r.patchFinalizers(ctx, rt, func(o client.Object) { controllerutil.RemoveFinalizer(o, RetrieverAuthFinalizer) })
}

// patchFinalizers applies change to a copy of rt and patches its
// finalizers, failing on a concurrent change of them (the workqueue then
// retries with a fresh read).
func (r *RetrieverReconciler) patchFinalizers(ctx context.Context, rt *v1alpha1.Retriever, change func(client.Object)) error {
	cp := rt.DeepCopy()
	change(cp)
	if err := r.Patch(ctx, cp, client.MergeFromWithOptions(rt, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("updating the finalizers of Retriever %s: %w", rt.Name, err)
	}
	return nil
}
