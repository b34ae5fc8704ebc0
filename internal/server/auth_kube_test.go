package server

import (
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// startAPIServer starts kube-apiserver and etcd from KUBEBUILDER_ASSETS
// for the test and returns an admin configuration. Without the binaries
// the test is skipped: they come from hack/control-plane.sh, which make
// test runs first.
func startAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set, so no kube-apiserver can start: run `eval \"$(hack/control-plane.sh --print)\"` (make test does)")
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() { env.Stop() })
	return cfg
}

// kubeFixture is a namespace with the ServiceAccounts of the auth matrix
// and the RBAC that tells them apart.
type kubeFixture struct {
	admin     kubernetes.Interface
	namespace string
	// tokens of each kind of caller, by kind.
	tokens map[string]string
}

// Kinds of caller in the Kubernetes auth matrix.
const (
	callerNone       = "no token"
	callerGarbage    = "not a Kubernetes token"
	callerAllowed    = "ServiceAccount with the query Role"
	callerOther      = "ServiceAccount allowed another Retriever"
	callerStranger   = "ServiceAccount without a Role"
	callerScraper    = "ServiceAccount allowed GET /metrics"
	reviewerAccount  = "retriever"
	queriedRetriever = "docs"
)

// newKubeFixture creates the namespace, ServiceAccounts, Roles and
// bindings, and a token for each caller from the TokenRequest API.
func newKubeFixture(t *testing.T, admin kubernetes.Interface) *kubeFixture {
	t.Helper()
	ctx := t.Context()
	f := &kubeFixture{admin: admin, namespace: "team-a", tokens: map[string]string{callerGarbage: "not-a-token"}}
	create(t, errOf(admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.namespace}}, metav1.CreateOptions{})))
	accounts := map[string]string{callerAllowed: "app", callerOther: "other-app", callerStranger: "stranger", callerScraper: "prometheus", "": reviewerAccount}
	for kind, sa := range accounts {
		create(t, errOf(admin.CoreV1().ServiceAccounts(f.namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})))
		if kind != "" {
			f.tokens[kind] = f.token(t, sa)
		}
	}
	f.grantQuery(t, "query-docs", queriedRetriever, "app")
	f.grantQuery(t, "query-faq", "faq", "other-app")
	f.bindClusterRole(t, "scrape-metrics", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "scrape-metrics"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, "prometheus")
	// The query server's own identity may review tokens and access, as
	// the operator grants it in Kubernetes mode, and nothing more.
	f.bindClusterRole(t, "retriever-auth-delegator", nil, reviewerAccount)
	return f
}

// create fails the test on err.
func create(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// errOf is the error of a call that also returns an object.
func errOf[T any](_ T, err error) error { return err }

// token requests an hour's token for a ServiceAccount of the namespace.
func (f *kubeFixture) token(t *testing.T, sa string) string {
	t.Helper()
	expiry := int64(3600)
	tr, err := f.admin.CoreV1().ServiceAccounts(f.namespace).CreateToken(t.Context(), sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// queryRole is the Role docs/auth.md tells a client it needs to query the
// Retriever retriever.
func queryRole(name, namespace, retriever string) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{RetrieverGroup}, Resources: []string{RetrieverResource + "/" + QuerySubresource},
			ResourceNames: []string{retriever}, Verbs: []string{QueryVerb}}}}
}

// grantQuery lets the ServiceAccount sa query the Retriever retriever.
func (f *kubeFixture) grantQuery(t *testing.T, name, retriever, sa string) {
	t.Helper()
	ctx := t.Context()
	create(t, errOf(f.admin.RbacV1().Roles(f.namespace).Create(ctx, queryRole(name, f.namespace, retriever), metav1.CreateOptions{})))
	create(t, errOf(f.admin.RbacV1().RoleBindings(f.namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: f.namespace}}}, metav1.CreateOptions{})))
}

// bindClusterRole binds role (created first unless nil, when name is
// bound to system:auth-delegator) to the ServiceAccount sa.
func (f *kubeFixture) bindClusterRole(t *testing.T, name string, role *rbacv1.ClusterRole, sa string) {
	t.Helper()
	ctx := t.Context()
	roleName := "system:auth-delegator"
	if role != nil {
		create(t, errOf(f.admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})))
		roleName = role.Name
	}
	create(t, errOf(f.admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: f.namespace}}}, metav1.CreateOptions{})))
}

// reviewerConfig acts as the query server's ServiceAccount, counting the
// requests it sends to the API server.
func (f *kubeFixture) reviewerConfig(t *testing.T, admin *rest.Config, calls *atomic.Int64) *rest.Config {
	cfg := &rest.Config{Host: admin.Host, BearerToken: f.token(t, reviewerAccount), TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			return rt.RoundTrip(r)
		})
	}
	return cfg
}

// roundTripFunc is a function as an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fakeClock is a clock a test moves.
type fakeClock struct{ now atomic.Pointer[time.Time] }

func (c *fakeClock) Now() time.Time { return *c.now.Load() }

func (c *fakeClock) add(d time.Duration) { t := c.Now().Add(d); c.now.Store(&t) }

func TestKubernetesAuth(t *testing.T) {
	adminConfig := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(adminConfig)
	f := newKubeFixture(t, admin)
	var calls atomic.Int64
	reviewer, err := NewKubeReviewer(f.reviewerConfig(t, adminConfig, &calls), f.namespace, queriedRetriever, KubeReviewerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{}
	now := time.Now()
	clock.now.Store(&now)
	reviewer.decisions = cache.NewLRUExpireCacheWithClock(DefaultReviewCacheSize, clock)
	reg := prometheus.NewRegistry()
	s := New(Options{Auth: reviewer, Registry: reg})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)

	t.Run("matrix", func(t *testing.T) {
		rows := kubeMatrix()
		checkMatrix(t, ts.Client(), ts.URL, rows, f.tokens)
		t.Log("auth matrix, mode Kubernetes:\n" + matrixTable(rows))
	})
	t.Run("a denial names what is missing", func(t *testing.T) {
		_, body := authRequest(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", f.tokens[callerStranger], `{"query": "x"}`)
		for _, want := range []string{"system:serviceaccount:team-a:stranger", "team-a/docs", "get on retrievers/query"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("403 body %s does not say %q", body, want)
			}
		}
	})
	t.Run("decisions are reused for the TTL", func(t *testing.T) {
		token := f.token(t, "app") // a token not seen yet
		query := func() int {
			resp, _ := authRequest(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", token, `{"query": "tomatoes"}`)
			return resp.StatusCode
		}
		before := calls.Load()
		if code := query(); code != 200 {
			t.Fatalf("first query: %d", code)
		}
		if got := calls.Load() - before; got != 2 {
			t.Fatalf("a new token cost %d API calls, want 2 (TokenReview, SubjectAccessReview)", got)
		}
		for range 5 {
			query()
		}
		if got := calls.Load() - before; got != 2 {
			t.Fatalf("five more queries within the TTL cost %d API calls, want none", got-2)
		}
		// Revoke the grant: it shows once the kept decision expires.
		if err := admin.RbacV1().RoleBindings(f.namespace).Delete(t.Context(), "query-docs", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if code := query(); code != 200 {
			t.Fatalf("within the TTL the kept decision holds: %d", code)
		}
		clock.add(DefaultReviewTTL + time.Second)
		if code := query(); code != 403 {
			t.Fatalf("past the TTL a revoked grant is refused: %d, want 403", code)
		}
	})
	t.Run("outcomes are counted", func(t *testing.T) {
		for _, outcome := range []string{"allowed", "missing_token", "invalid_token", "forbidden"} {
			var got float64
			for _, access := range []Access{AccessQuery, AccessMetrics} {
				got += testutil.ToFloat64(authOutcomes(reg).WithLabelValues("kubernetes", string(access), outcome))
			}
			if got == 0 {
				t.Errorf("no request counted with outcome %s", outcome)
			}
		}
	})
}

// kubeMatrix is the Kubernetes-mode auth matrix: each kind of caller on
// each endpoint, and the status code it gets.
func kubeMatrix() []authStatus {
	return matrix([]callerCodes{
		{callerNone, [5]int{401, 401, 200, 200, 401}},
		{callerGarbage, [5]int{401, 401, 200, 200, 401}},
		{callerStranger, [5]int{403, 403, 200, 200, 403}},
		{callerOther, [5]int{403, 403, 200, 200, 403}},
		{callerAllowed, [5]int{200, 403, 200, 200, 404}},
		{callerScraper, [5]int{403, 200, 200, 200, 403}},
	})
}
