package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/milvustest"
	"github.com/parentrag/parentrag/internal/server"
)

// TestMilvusCorpusAnswersLikeTheEmbeddedOne serves the docs twice, once with
// children in the embedded index and once in Milvus (the wire-compatible
// server, through the real client in the operator and in `parentrag
// serve`), and checks both return the same parents in the same order.
func TestMilvusCorpusAnswersLikeTheEmbeddedOne(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane with workloads; skipped with -short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := startCluster(t, ctx)
	srv := milvustest.Start(t)
	bin, err := env.BuildBinary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ns := "parentrag-milvus"
	files, err := env.SampleFiles()
	if err != nil {
		t.Fatal(err)
	}
	if err := createNamespace(ctx, env, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Apply(ctx, ns, files...); err != nil {
		t.Fatal(err)
	}
	embedded := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parentrag-docs"}}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(embedded), embedded); err != nil {
		t.Fatal(err)
	}
	inMilvus := &v1alpha1.Corpus{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "docs-milvus"},
		Spec:       *embedded.Spec.DeepCopy(),
	}
	inMilvus.Spec.VectorStore = &v1alpha1.VectorStore{Milvus: &v1alpha1.MilvusVectorStore{Address: srv.Addr()}}
	rt := &v1alpha1.Retriever{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "docs-milvus"},
		Spec:       v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "docs-milvus"}},
	}
	for _, obj := range []client.Object{inMilvus, rt} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	embeddedRt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parentrag-docs"}}
	waitServing(t, env, embedded, embeddedRt, "")
	rev := waitServing(t, env, inMilvus, rt, "")
	eventually(t, 30*time.Second, "the alias to move to the served collection", func() bool {
		return srv.Aliases()[inMilvus.MilvusAlias()] == inMilvus.MilvusCollection(rev)
	})
	questions := []string{question, "How does a context budget trim parents?", "What does the Corpus status report?"}
	want := answers(t, ctx, env, bin, embeddedRt, questions)
	got := answers(t, ctx, env, bin, rt, questions)
	for i, q := range questions {
		if !slices.Equal(parentIDs(got[i]), parentIDs(want[i])) || len(got[i].Results) == 0 {
			t.Errorf("%q: Milvus-backed answer %v, embedded %v", q, parentIDs(got[i]), parentIDs(want[i]))
		}
	}
}

// answers asks every question of `parentrag serve` run as a pod of the
// Retriever's Deployment.
func answers(t *testing.T, ctx context.Context, env *devcluster.Env, bin string, r *v1alpha1.Retriever, questions []string) []*server.RetrieveResponse {
	t.Helper()
	var d appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(r), &d); err != nil {
		t.Fatal(err)
	}
	srv, err := env.StartServe(ctx, bin, &d)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := srv.WaitReady(60 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, srv.Log())
	}
	var out []*server.RetrieveResponse
	for _, q := range questions {
		resp, err := srv.Retrieve(ctx, q, 3)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, resp)
	}
	return out
}

// parentIDs lists a response's parents in order.
func parentIDs(r *server.RetrieveResponse) []string {
	out := make([]string, len(r.Results))
	for i, res := range r.Results {
		out[i] = res.ParentID
	}
	return out
}

// eventually polls cond until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
