//go:build cluster

package cluster_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
)

// TestKubernetesAuthThroughTheService turns the samples' Retriever to
// spec.auth.mode Kubernetes and calls its Service as in-cluster apps do,
// with their ServiceAccount tokens: the query pods review each token with
// the API server (through the binding the operator made), RBAC on
// retrievers/query decides, and the probes stay open. Deleting the
// Retriever removes its cluster-scoped binding.
func TestKubernetesAuthThroughTheService(t *testing.T) {
	if envOr("PARENTRAG_SERVICE_ACCESS", "clusterip") != "clusterip" {
		t.Skip("needs the ClusterIP: through the API server's service proxy a request carries the proxy caller's credentials, not the app's token")
	}
	ctx := context.Background()
	ns := newNamespace(t, "auth")
	applyKustomization(t, "config/samples", ns)
	_, r := waitSamplesReady(t, ns)
	get(t, r)
	patch := client.MergeFrom(r.DeepCopy())
	r.Spec.Auth = &v1alpha1.RetrieverAuth{Mode: v1alpha1.AuthKubernetes}
	if err := k8s.Patch(ctx, r, patch); err != nil {
		t.Fatal(err)
	}
	e := endpointOf(t, ns, r.Name)
	reader := serviceAccountToken(t, ns, "reader")
	stranger := serviceAccountToken(t, ns, "stranger")
	allowQuery(t, ns, "reader", r.Name)

	waitCurrent(t, r, 3*time.Minute)
	// The pods of the open revision keep answering for their drain delay
	// while the Service stops routing to them: wait until none is left.
	eventually(t, 2*time.Minute, "only pods in Kubernetes mode to run", func() (bool, error) {
		pods := retrieverPods(t, ns, r.Name)
		for _, p := range pods {
			if !slices.Contains(p.Spec.Containers[0].Args, "--auth=kubernetes") {
				return false, nil
			}
		}
		return len(pods) == int(r.GetReplicas()), nil
	})
	eventually(t, time.Minute, "the Service to refuse a query without a token", func() (bool, error) {
		code, err := statusOf(e, http.MethodPost, "/v1/retrieve", "")
		return code == http.StatusUnauthorized, err
	})
	want := map[string]map[string]int{
		"no token":        {"/v1/retrieve": 401, "/v1/vector_stores": 401, "/metrics": 401, "/healthz": 200, "/readyz": 200},
		"stranger":        {"/v1/retrieve": 403, "/v1/vector_stores": 403, "/metrics": 403, "/healthz": 200, "/readyz": 200},
		"reader":          {"/v1/retrieve": 200, "/v1/vector_stores": 200, "/metrics": 403, "/healthz": 200, "/readyz": 200},
		"not a k8s token": {"/v1/retrieve": 401, "/v1/vector_stores": 401, "/metrics": 401, "/healthz": 200, "/readyz": 200},
	}
	tokens := map[string]string{"no token": "", "stranger": stranger, "reader": reader, "not a k8s token": "abc.def.ghi"}
	for who, paths := range want {
		for path, code := range paths {
			method := http.MethodGet
			if path == "/v1/retrieve" {
				method = http.MethodPost
			}
			if got, err := statusOf(e, method, path, tokens[who]); err != nil || got != code {
				t.Errorf("%s: %s %s answered %d (%v), want %d", who, method, path, got, err, code)
			}
		}
	}

	if err := k8s.Delete(ctx, r); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the auth binding to go with its Retriever", func() (bool, error) {
		err := k8s.Get(ctx, client.ObjectKey{Name: controllers.AuthDelegatorBindingName(r)}, &rbacv1.ClusterRoleBinding{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// serviceAccountToken makes a ServiceAccount and returns a token of it,
// as `kubectl create token` does.
func serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := k8s.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// allowQuery grants the ServiceAccount the Role docs/auth.md gives a
// client: get on retrievers/query of one Retriever.
func allowQuery(t *testing.T, ns, sa, retriever string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "query-" + retriever},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"retrievers/query"},
			ResourceNames: []string{retriever}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "query-" + retriever},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
}

// statusOf sends one request to the Service with token ("" sends none)
// and returns the status code.
func statusOf(e *serviceEndpoint, method, path, token string) (int, error) {
	var body []byte
	if method == http.MethodPost {
		body = []byte(`{"query": "What is a parent?", "maxParents": 1}`)
	}
	req, err := http.NewRequest(method, e.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
