package monitoring

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/rerank"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/server"
)

// exported maps each series name a scrape can return to the label names
// its series carry: a histogram's _bucket, _count and _sum, a counter's
// or gauge's own name.
type exported map[string]map[string]bool

// add records the families gathered from g.
func (e exported) add(t *testing.T, g prometheus.Gatherer) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		names := []string{f.GetName()}
		if f.GetType() == dto.MetricType_HISTOGRAM {
			names = []string{f.GetName() + "_bucket", f.GetName() + "_count", f.GetName() + "_sum"}
		}
		for _, n := range names {
			labels := e[n]
			if labels == nil {
				labels = map[string]bool{}
				e[n] = labels
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = true
				}
			}
			if strings.HasSuffix(n, "_bucket") {
				labels["le"] = true
			}
		}
	}
}

// serverSeries starts a query server on a real index with a reranker that
// is down and an embedding endpoint that fails, sends it the requests that
// make each of its series appear (a query, a refused one, a bad one, one
// without a token), and returns what its /metrics registry holds.
func serverSeries(t *testing.T) exported {
	t.Helper()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	rr, err := rerank.New(rerank.Options{URL: down.URL, Convention: rerank.TEI, Timeout: time.Second, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	tokens := t.TempDir()
	writeToken(t, tokens, "reader", "s3cret")
	auth, err := server.NewTokenDir(tokens, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Options{Registry: reg, Auth: auth, MaxQueryTerms: 1,
		Rerank: &retrieve.Rerank{Reranker: rr, Target: retrieve.RerankParents}})
	docs := []hierarchy.Document{{ID: "a.md", Text: "# Rollout\n\nA new revision is built beside the serving one."}}
	b, err := bundle.Open(bundletest.Save(t, docs, "r1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	srv.SetBundle(b)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for _, body := range []string{`{"query":"revision"}`, `{"query":"revision rollout beside serving"}`, `{}`} {
		post(t, ts.URL+"/v1/retrieve", "s3cret", body)
	}
	post(t, ts.URL+"/v1/retrieve", "", `{"query":"revision"}`)
	e := exported{}
	e.add(t, reg)
	return e
}

// operatorSeries returns what the operator's /metrics registry holds: the
// status series of a Corpus and a Retriever, and controller-runtime's
// series of a controller that has reconciled once.
func operatorSeries(t *testing.T) exported {
	t.Helper()
	ready := []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonSucceeded}}
	corpus := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "docs", Name: "handbook"}}
	corpus.Status.Conditions = ready
	corpus.Status.ActiveRevision = &v1alpha1.RevisionStatus{Name: "handbook-0123abcd"}
	retriever := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: "docs", Name: "handbook"}}
	retriever.Status.Conditions = ready
	reader := fake.NewClientBuilder().WithScheme(controllers.NewScheme()).WithObjects(corpus, retriever).Build()
	if err := controllers.RegisterStatusMetrics(ctrlmetrics.Registry, func() client.Reader { return reader }); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t)
	e := exported{}
	e.add(t, ctrlmetrics.Registry)
	return e
}

// reconcileOnce runs a controller-runtime controller until it has
// reconciled one request, so that its reconcile and work queue series
// exist.
func reconcileOnce(t *testing.T) {
	t.Helper()
	done := make(chan struct{})
	c, err := controller.NewUnmanaged("corpus", controller.Options{
		SkipNameValidation: ptr(true),
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			close(done)
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan event.TypedGenericEvent[*v1alpha1.Corpus], 1)
	events <- event.TypedGenericEvent[*v1alpha1.Corpus]{Object: &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "docs", Name: "handbook"}}}
	if err := c.Watch(source.Channel(events, &handler.TypedEnqueueRequestForObject[*v1alpha1.Corpus]{})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Start(ctx)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the controller did not reconcile")
	}
	// The reconcile's time is observed once it has returned.
	deadline := time.Now().Add(10 * time.Second)
	for !observed(t, "controller_runtime_reconcile_time_seconds") {
		if time.Now().After(deadline) {
			t.Fatal("no reconcile time observed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// observed reports whether controller-runtime's registry holds a
// histogram name with a sample.
func observed(t *testing.T, name string) bool {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				if m.GetHistogram().GetSampleCount() > 0 {
					return true
				}
			}
		}
	}
	return false
}

// post sends a POST with a bearer token (none when empty) and fails the
// test on a transport error.
func post(t *testing.T, url, token, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
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
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// writeToken writes a token file as a mounted Secret holds it.
func writeToken(t *testing.T, dir, name, token string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }
