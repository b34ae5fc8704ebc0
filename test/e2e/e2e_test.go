// Package e2e runs parentrag end to end on a real control plane: the
// operator reconciles the samples, the real Deployment controller,
// scheduler and a kwok node make the query pods Ready, and `parentrag
// serve` runs with exactly what a pod of the Deployment would get.
package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/server"
)

const question = "Why split documents into parents and children?"

// samplePolicy is the ChunkingPolicy of config/samples that its Corpus uses.
const samplePolicy = "parentrag-sample-handbook"

func TestSamplesServeQueriesAndRollToANewRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane with workloads; skipped with -short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, bin, corpus, retriever := startSamples(t, ctx, "parentrag-e2e")
	first := waitServing(t, env, corpus, retriever, "")
	askLikeAPod(t, ctx, env, bin, retriever, first)

	var policy v1alpha1.ChunkingPolicy
	if err := env.Client.Get(ctx, client.ObjectKey{Name: samplePolicy}, &policy); err != nil {
		t.Fatal(err)
	}
	policy.Spec.Child = &v1alpha1.ChunkSize{ChunkSize: 200, ChunkOverlap: 20}
	if err := env.Client.Update(ctx, &policy); err != nil {
		t.Fatal(err)
	}
	second := waitServing(t, env, corpus, retriever, first)
	if second == first {
		t.Fatalf("the policy change did not make a new revision")
	}
	askLikeAPod(t, ctx, env, bin, retriever, second)
}

// startSamples starts a cluster, builds the parentrag binary and applies
// config/samples to a new namespace; it returns the samples' Corpus and
// Retriever, by name.
func startSamples(t *testing.T, ctx context.Context, ns string) (*devcluster.Env, string, *v1alpha1.Corpus, *v1alpha1.Retriever) {
	t.Helper()
	env := startCluster(t, ctx)
	bin, err := env.BuildBinary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := createNamespace(ctx, env, ns); err != nil {
		t.Fatal(err)
	}
	files, err := env.SampleFiles()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Apply(ctx, ns, files...); err != nil {
		t.Fatal(err)
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	return env, bin, &v1alpha1.Corpus{ObjectMeta: meta("parentrag-docs")}, &v1alpha1.Retriever{ObjectMeta: meta("parentrag-docs")}
}

// serveChangedSamples applies the samples into ns, waits for the Corpus to
// be Ready, changes the Retriever's spec with change, waits until its
// Deployment runs the query server with wantArg, and starts that server as
// its pod would, ready. It returns the cluster, the Retriever and the
// server, which stops when the test ends.
func serveChangedSamples(t *testing.T, ctx context.Context, ns string, change func(*v1alpha1.Retriever), wantArg string) (*devcluster.Env, *v1alpha1.Retriever, *devcluster.ServeProcess) {
	t.Helper()
	env, bin, corpus, retriever := startSamples(t, ctx, ns)
	get := func(obj client.Object) error { return env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj) }
	eventually(t, time.Duration(waitMinutes())*time.Minute, "the Corpus to be Ready", func() bool { return get(corpus) == nil && ready(corpus.Status.Conditions) })
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := get(retriever); err != nil {
			return err
		}
		change(retriever)
		return env.Client.Update(ctx, retriever)
	})
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	eventually(t, time.Minute, "the Deployment to run with "+wantArg, func() bool {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(retriever), &d) == nil &&
			slices.Contains(d.Spec.Template.Spec.Containers[0].Args, wantArg)
	})
	srv, err := env.StartServe(ctx, bin, &d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	if err := srv.WaitReady(60 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, srv.Log())
	}
	return env, retriever, srv
}

// createNamespace creates a namespace.
func createNamespace(ctx context.Context, env *devcluster.Env, name string) error {
	return env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// startCluster starts the control plane with workloads and the operator.
func startCluster(t *testing.T, ctx context.Context) *devcluster.Env {
	t.Helper()
	return startClusterWith(t, ctx, (*devcluster.Env).StartWorkloads)
}

// startClusterWith starts the control plane, the workloads that start
// starts, and the operator.
func startClusterWith(t *testing.T, ctx context.Context, start func(*devcluster.Env, context.Context) error) *devcluster.Env {
	t.Helper()
	env, err := devcluster.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	if err := start(env, ctx); err != nil {
		t.Fatal(err)
	}
	// Each test of this package runs its own operator against its own
	// control plane; controller names are registered per process.
	skip := true
	managerConfig, err := env.ManagerConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The operator's own cache and client options, as `parentrag manager`
	// sets them: under the shipped RBAC it may not list or watch Secrets.
	mgr, err := ctrl.NewManager(managerConfig, ctrl.Options{
		Scheme:     controllers.NewScheme(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: &skip},
		Cache:      controllers.CacheOptions(),
		Client:     controllers.ClientOptions(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := controllers.Setup(mgr, controllers.Options{Image: "parentrag:e2e"}); err != nil {
		t.Fatal(err)
	}
	go mgr.Start(ctx)
	return env
}

// waitServing waits until the Corpus is Ready on a revision other than
// previous and the Retriever's Deployment serves it on every replica, and
// returns that revision.
func waitServing(t *testing.T, env *devcluster.Env, c *v1alpha1.Corpus, r *v1alpha1.Retriever, previous string) string {
	t.Helper()
	deadline := time.Now().Add(time.Duration(waitMinutes()) * time.Minute)
	for time.Now().Before(deadline) {
		env.Client.Get(context.Background(), client.ObjectKeyFromObject(c), c)
		env.Client.Get(context.Background(), client.ObjectKeyFromObject(r), r)
		a := c.Status.ActiveRevision
		if a != nil && a.Name != previous && r.Status.ServingRevision == a.Name && ready(r.Status.Conditions) && r.Status.ReadyReplicas == r.GetReplicas() {
			return a.Name
		}
		time.Sleep(200 * time.Millisecond)
	}
	var pods corev1.PodList
	env.Client.List(context.Background(), &pods, client.InNamespace(r.Namespace))
	var states []string
	for _, p := range pods.Items {
		states = append(states, fmt.Sprintf("%s node=%q phase=%s conditions=%v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions))
	}
	t.Fatalf("no new revision served in time: corpus %+v\nretriever %+v\npods:\n%s\nkube-scheduler:\n%s\nkwok:\n%s",
		c.Status, r.Status, strings.Join(states, "\n"), env.LogTail("kube-scheduler", 15), env.LogTail("kwok", 15))
	return ""
}

// ready reports whether the Ready condition is True.
func ready(conds []metav1.Condition) bool {
	for _, c := range conds {
		if c.Type == v1alpha1.ConditionReady {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// askLikeAPod runs `parentrag serve` with the Deployment's args, env and
// service account, asks it the question and checks the parents it returns.
func askLikeAPod(t *testing.T, ctx context.Context, env *devcluster.Env, bin string, r *v1alpha1.Retriever, revision string) {
	t.Helper()
	resp := retrieveLikeAPod(t, ctx, env, bin, r, revision, question)
	top := resp.Results[0]
	if !strings.HasPrefix(top.DocID, "parentrag-docs/") || !strings.Contains(strings.ToLower(top.Text), "parent") || len(top.Matches) == 0 {
		t.Fatalf("top parent %s does not answer the question:\n%s", top.DocID, top.Text)
	}
	t.Logf("revision %s answered from %s (score %.2f, %d matching children)", revision, top.DocID, top.Score, len(top.Matches))
}

// retrieveLikeAPod runs `parentrag serve` as a pod of the Retriever's
// Deployment on revision runs it, asks it query and returns the answer,
// which comes from that revision with 1 to 3 parents.
func retrieveLikeAPod(t *testing.T, ctx context.Context, env *devcluster.Env, bin string, r *v1alpha1.Retriever, revision, query string) *server.RetrieveResponse {
	t.Helper()
	var d appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(r), &d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Annotations["parentrag.io/revision"]; got != revision {
		t.Fatalf("Deployment template is on revision %s, want %s", got, revision)
	}
	srv, err := env.StartServe(ctx, bin, &d)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := srv.WaitReady(60 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, srv.Log())
	}
	resp, err := srv.Retrieve(ctx, query, 3)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Revision != revision || len(resp.Results) == 0 || len(resp.Results) > 3 {
		t.Fatalf("answer from revision %s with %d parents, want revision %s and 1 to 3 parents", resp.Revision, len(resp.Results), revision)
	}
	return resp
}

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "e2e: KUBEBUILDER_ASSETS is not set: run `eval \"$(hack/control-plane.sh --print)\"` (make test does)")
		os.Exit(1)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	os.Exit(m.Run())
}

// waitMinutes is how long a rollout may take (PARENTRAG_E2E_WAIT_MINUTES,
// default 3).
func waitMinutes() int {
	var n int
	if _, err := fmt.Sscanf(os.Getenv("PARENTRAG_E2E_WAIT_MINUTES"), "%d", &n); err != nil || n <= 0 {
		return 3
	}
	return n
}
