package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
)

// TestKubernetesAuthEndToEnd: the samples' Retriever in Kubernetes auth
// mode runs `parentrag serve` as its pod would, with its ServiceAccount's
// token and only what the operator granted it under the shipped RBAC; a
// client holding the Role of docs/auth.md gets answers, any other caller
// is refused, and the probes stay open.
func TestKubernetesAuthEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and builds the binary; skipped with -short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns = "parentrag-auth"
	env, retriever, srv := serveChangedSamples(t, ctx, ns, func(r *v1alpha1.Retriever) {
		r.Spec.Auth = &v1alpha1.RetrieverAuth{Mode: v1alpha1.AuthKubernetes}
	}, "--auth=kubernetes")

	tokens := clientTokens(t, ctx, env, ns, retriever.Name)
	query := fmt.Sprintf(`{"query": %q}`, question)
	for _, tc := range []struct {
		caller, method, path, body string
		want                       int
	}{
		{"", "GET", "/healthz", "", 200},
		{"", "GET", "/readyz", "", 200},
		{"", "POST", "/v1/retrieve", query, 401},
		{"stranger", "POST", "/v1/retrieve", query, 403},
		{"client", "POST", "/v1/retrieve", query, 200},
		{"client", "GET", "/metrics", "", 403},
	} {
		code, body := call(t, ctx, srv.URL+tc.path, tc.method, tokens[tc.caller], tc.body)
		if code != tc.want {
			t.Errorf("%q %s %s: %d %s, want %d\nserver log:\n%s", tc.caller, tc.method, tc.path, code, body, tc.want, srv.Log())
		}
	}
}

// clientTokens creates the ServiceAccounts client, allowed to query the
// Retriever by the Role of docs/auth.md, and stranger, allowed nothing,
// and returns a token of each, by name.
func clientTokens(t *testing.T, ctx context.Context, env *devcluster.Env, ns, retriever string) map[string]string {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "query-" + retriever},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"parentrag.io"}, Resources: []string{"retrievers/query"},
			ResourceNames: []string{retriever}, Verbs: []string{"get"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "client-queries-" + retriever},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "client", Namespace: ns}}}
	objs := []client.Object{role, binding,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "client"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stranger"}}}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	tokens := map[string]string{}
	for _, sa := range []string{"client", "stranger"} {
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tokens[sa] = tr.Status.Token
	}
	return tokens
}

// call sends one request with token as its bearer token ("" for none)
// and returns the status code and body.
func call(t *testing.T, ctx context.Context, url, method, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}
