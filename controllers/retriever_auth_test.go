package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/devcluster"
)

func TestAPIServerRefusesInvalidAuth(t *testing.T) {
	ns := newNamespace(t)
	secret := &v1alpha1.LocalObjectReference{Name: "tokens"}
	for _, tc := range []struct {
		name string
		auth v1alpha1.RetrieverAuth
		want string
	}{
		{"BearerToken without secretRef", v1alpha1.RetrieverAuth{Mode: v1alpha1.AuthBearerToken},
			"auth.secretRef is required with mode BearerToken: name the Secret whose keys hold the accepted tokens"},
		{"Kubernetes with secretRef", v1alpha1.RetrieverAuth{Mode: v1alpha1.AuthKubernetes, SecretRef: secret},
			"auth.secretRef is only read with mode BearerToken: remove it, or set mode: BearerToken"},
		{"secretRef without a mode", v1alpha1.RetrieverAuth{SecretRef: secret},
			"auth.secretRef is only read with mode BearerToken"},
		{"unknown mode", v1alpha1.RetrieverAuth{Mode: "Token"},
			`spec.auth.mode: Unsupported value: "Token": supported values: "None", "BearerToken", "Kubernetes"`},
		{"secretRef without a name", v1alpha1.RetrieverAuth{Mode: v1alpha1.AuthBearerToken, SecretRef: &v1alpha1.LocalObjectReference{}},
			"spec.auth.secretRef.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guarded"},
				Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "c"}, Auth: &tc.auth}}
			expectInvalid(t, toUnstructured(t, rt), tc.want)
		})
	}
}

// authRetriever creates a Retriever with auth over a Corpus and returns
// it with its Deployment once that exists.
func authRetriever(t *testing.T, ns, name, corpus string, auth *v1alpha1.RetrieverAuth) (*v1alpha1.Retriever, *appsv1.Deployment) {
	t.Helper()
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: corpus}, Auth: auth}}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	return rt, deploymentWith(t, rt, func(*appsv1.Deployment) bool { return true })
}

// deploymentWith waits until the Retriever's Deployment satisfies ok.
func deploymentWith(t *testing.T, rt *v1alpha1.Retriever, ok func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	eventually(t, 30*time.Second, "the Deployment", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rt), &d)
		return err == nil && ok(&d), err
	})
	return &d
}

// hasArgs reports whether the query container runs with every arg.
func hasArgs(d *appsv1.Deployment, args ...string) bool {
	for _, a := range args {
		if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, a) {
			return false
		}
	}
	return true
}

// hasAuthArg reports whether any --auth flag is among the container's args.
func hasAuthArg(d *appsv1.Deployment) bool {
	return slices.ContainsFunc(d.Spec.Template.Spec.Containers[0].Args, func(a string) bool { return contains(a, "--auth") })
}

func TestRetrieverAuthModesShapeTheDeployment(t *testing.T) {
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)

	_, open := authRetriever(t, ns, "open", c.Name, nil)
	if hasAuthArg(open) || len(open.Spec.Template.Spec.Volumes) != 1 {
		t.Fatalf("mode None: args %v, volumes %+v, want no auth flag and only the data volume",
			open.Spec.Template.Spec.Containers[0].Args, open.Spec.Template.Spec.Volumes)
	}

	createSecret(t, ns, "query-tokens", map[string][]byte{"app": []byte("token-of-app")})
	_, bearer := authRetriever(t, ns, "bearer", c.Name, &v1alpha1.RetrieverAuth{Mode: v1alpha1.AuthBearerToken,
		SecretRef: &v1alpha1.LocalObjectReference{Name: "query-tokens"}})
	if !hasArgs(bearer, "--auth=bearer", "--auth-token-dir="+controllers.AuthTokenDir) {
		t.Fatalf("mode BearerToken: args %v", bearer.Spec.Template.Spec.Containers[0].Args)
	}
	pod := bearer.Spec.Template.Spec
	i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Secret != nil })
	if i < 0 || pod.Volumes[i].Secret.SecretName != "query-tokens" || (pod.Volumes[i].Secret.Optional != nil && *pod.Volumes[i].Secret.Optional) {
		t.Fatalf("mode BearerToken: volumes %+v, want the Secret query-tokens, not optional", pod.Volumes)
	}
	j := slices.IndexFunc(pod.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == pod.Volumes[i].Name })
	if j < 0 || pod.Containers[0].VolumeMounts[j].MountPath != controllers.AuthTokenDir || !pod.Containers[0].VolumeMounts[j].ReadOnly {
		t.Fatalf("mode BearerToken: mounts %+v, want the Secret read-only at %s", pod.Containers[0].VolumeMounts, controllers.AuthTokenDir)
	}
	var crb rbacv1.ClusterRoleBinding
	err := k8s.Get(context.Background(), client.ObjectKey{Name: "parentrag:retriever-auth:" + ns + ":bearer"}, &crb)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("mode BearerToken made a ClusterRoleBinding: %v", err)
	}
}

func TestRetrieverInKubernetesModeMayReviewItsCallersUntilItGoes(t *testing.T) {
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)
	rt, d := authRetriever(t, ns, "kube", c.Name, &v1alpha1.RetrieverAuth{Mode: v1alpha1.AuthKubernetes})
	if !hasArgs(d, "--auth=kubernetes", "--auth-retriever="+ns+"/kube") {
		t.Fatalf("mode Kubernetes: args %v", d.Spec.Template.Spec.Containers[0].Args)
	}
	binding := waitBinding(t, rt, true)
	if binding.RoleRef.Name != "system:auth-delegator" || binding.RoleRef.Kind != "ClusterRole" ||
		!slices.Equal(binding.Subjects, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "kube", Namespace: ns}}) {
		t.Fatalf("binding %+v, want system:auth-delegator for ServiceAccount %s/kube", binding, ns)
	}
	get(t, rt)
	if !controllerutil.ContainsFinalizer(rt, controllers.RetrieverAuthFinalizer) {
		t.Fatalf("finalizers %v, want %s", rt.Finalizers, controllers.RetrieverAuthFinalizer)
	}
	// What the binding is for: the pods' identity can review a token.
	reviewAsPod(t, ns, "kube")

	// Leaving Kubernetes mode removes the binding and the finalizer.
	setAuth(t, rt, nil)
	waitBinding(t, rt, false)
	deploymentWith(t, rt, func(d *appsv1.Deployment) bool { return !hasAuthArg(d) })
	eventually(t, 20*time.Second, "the finalizer to go", func() (bool, error) {
		get(t, rt)
		return !controllerutil.ContainsFinalizer(rt, controllers.RetrieverAuthFinalizer), nil
	})

	// Back in Kubernetes mode, deleting the Retriever deletes the binding
	// and then lets the Retriever go.
	setAuth(t, rt, &v1alpha1.RetrieverAuth{Mode: v1alpha1.AuthKubernetes})
	waitBinding(t, rt, true)
	if err := k8s.Delete(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	waitBinding(t, rt, false)
	eventually(t, 20*time.Second, "the Retriever to go", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rt), &v1alpha1.Retriever{})
		return apierrors.IsNotFound(err), err
	})
}

// updateRetriever applies change to the Retriever and updates it,
// retrying on conflicts with the operator's writes.
func updateRetriever(t *testing.T, rt *v1alpha1.Retriever, change func(*v1alpha1.Retriever)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		get(t, rt)
		change(rt)
		return k8s.Update(context.Background(), rt)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setAuth updates the Retriever's spec.auth.
func setAuth(t *testing.T, rt *v1alpha1.Retriever, auth *v1alpha1.RetrieverAuth) {
	t.Helper()
	updateRetriever(t, rt, func(rt *v1alpha1.Retriever) { rt.Spec.Auth = auth })
}

// createSecret creates a Secret with data.
func createSecret(t *testing.T, ns, name string, data map[string][]byte) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	if err := k8s.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	return secret
}

func TestBearerTokenRetrieverWaitsForItsSecret(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guarded"},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name},
			Auth: &v1alpha1.RetrieverAuth{Mode: v1alpha1.AuthBearerToken, SecretRef: &v1alpha1.LocalObjectReference{Name: "later"}}}}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	waitReadyReason := func(reason, message string) {
		t.Helper()
		eventually(t, 30*time.Second, "Ready reason "+reason, func() (bool, error) {
			get(t, rt)
			ready := meta.FindStatusCondition(rt.Status.Conditions, v1alpha1.ConditionReady)
			if ready == nil {
				return false, nil
			}
			return ready.Status == metav1.ConditionFalse && ready.Reason == reason && contains(ready.Message, message),
				fmt.Errorf("Ready %s %s: %s", ready.Status, ready.Reason, ready.Message)
		})
	}
	waitReadyReason(v1alpha1.ReasonAuthSecretNotReady, "Secret later of auth.secretRef does not exist: create it with one accepted token in each key")
	err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rt), &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("a Deployment was made before its Secret exists: %v", err)
	}
	secret := createSecret(t, ns, "later", nil)
	waitReadyReason(v1alpha1.ReasonAuthSecretNotReady, "Secret later of auth.secretRef holds no key")
	secret.Data = map[string][]byte{"app": []byte("token-of-app")}
	if err := k8s.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	deploymentWith(t, rt, func(d *appsv1.Deployment) bool { return hasArgs(d, "--auth=bearer") })
}

// waitBinding waits until the Retriever's auth-delegator binding exists
// (or, with exists false, is gone) and returns it.
func waitBinding(t *testing.T, rt *v1alpha1.Retriever, exists bool) *rbacv1.ClusterRoleBinding {
	t.Helper()
	var crb rbacv1.ClusterRoleBinding
	key := client.ObjectKey{Name: controllers.AuthDelegatorBindingName(rt)}
	eventually(t, 30*time.Second, "the ClusterRoleBinding "+key.Name, func() (bool, error) {
		err := k8s.Get(context.Background(), key, &crb)
		if exists {
			return err == nil, err
		}
		return apierrors.IsNotFound(err), err
	})
	return &crb
}

// reviewAsPod creates a TokenReview as the Retriever's ServiceAccount
// would from its pod, failing the test when RBAC refuses it.
func reviewAsPod(t *testing.T, ns, sa string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(devcluster.ServiceAccountConfig(env.Config, ns, sa))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the pod's identity to review a token", func() (bool, error) {
		_, err := cs.AuthenticationV1().TokenReviews().Create(context.Background(),
			&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "x"}}, metav1.CreateOptions{})
		return err == nil, err
	})
}
