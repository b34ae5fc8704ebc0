package controllers_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// BenchmarkReconcileUnchangedCorpus reconciles a ready Corpus whose
// sources did not change, as a resync, an annotation or an event of
// another object does: 30,000 synthetic notes in 20 ConfigMaps read by a
// selector, indexed in segments. A reconciler of its own, with a manager
// and informers of its own as the operator has them, reconciles it; the
// suite's operator built it. It reports the operator's CPU time and the
// requests it sent to the API server per reconcile, by verb and
// resource (the API server's own CPU grows with what those requests
// read, not with what they return).
func BenchmarkReconcileUnchangedCorpus(b *testing.B) {
	ctx := context.Background()
	r, req, requests := reconcilerOfNotes(b, 20, 1500)
	cpu := synthtest.ProcessCPUTime()
	for b.Loop() {
		if _, err := r.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((synthtest.ProcessCPUTime()-cpu).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	for _, k := range requests.keys() {
		b.ReportMetric(float64(requests.get(k))/float64(b.N), k+"/op")
	}
}

// TestReconcileOfUnchangedCorpusSendsOneRequest: a reconcile of a ready
// Corpus stored as segments, whose sources did not change, gets the
// Corpus from the API server and sends nothing else: its sources,
// manifest, shards and stored revisions are read from informers and what
// it remembers, and its unchanged status is not written.
func TestReconcileOfUnchangedCorpusSendsOneRequest(t *testing.T) {
	r, req, requests := reconcilerOfNotes(t, 2, 20)
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if keys := requests.keys(); len(keys) != 1 || keys[0] != "get-corpora" || requests.get("get-corpora") != 1 {
		t.Fatalf("a reconcile of the unchanged Corpus sent %v, want one get-corpora", requests.snapshot())
	}
}

// reconcilerOfNotes makes a ready Corpus of n ConfigMaps of perMap notes,
// in a namespace of its own, and returns a reconciler of its own (see
// benchReconciler), once it has reconciled the Corpus to fill its caches,
// with the request that reconciles it and the counts of the requests it
// sends from then on.
func reconcilerOfNotes(tb testing.TB, n, perMap int) (*controllers.CorpusReconciler, ctrl.Request, *requestCounts) {
	ns := newNamespace(tb)
	createNoteConfigMaps(tb, ns, n, perMap)
	c := readyNotesCorpus(tb, ns)
	requests := &requestCounts{}
	r := benchReconciler(tb, requests)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c)}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		tb.Fatal(err)
	}
	requests.reset()
	return r, req, requests
}

// createNoteConfigMaps creates n ConfigMaps labelled corpus=notes in ns,
// each of perMap synthetic notes.
func createNoteConfigMaps(b testing.TB, ns string, n, perMap int) {
	words := synthtest.New(7, 20000)
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("notes-%02d", i), Labels: map[string]string{"corpus": "notes"}}, Data: map[string]string{}}
		for j := range perMap {
			cm.Data[fmt.Sprintf("note-%04d.txt", j)] = words.Paragraph()
		}
		if err := k8s.Create(context.Background(), cm); err != nil {
			b.Fatal(err)
		}
	}
}

// notesSelector selects the ConfigMaps createNoteConfigMaps makes.
var notesSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"corpus": "notes"}}

// readyNotesCorpus creates a Corpus of the notes in ns, indexed in
// segments, and returns it once it serves a revision.
func readyNotesCorpus(b testing.TB, ns string) *v1alpha1.Corpus {
	ctx := context.Background()
	p := &v1alpha1.ChunkingPolicy{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("policy")}, Spec: v1alpha1.ChunkingPolicySpec{
		Parent: &v1alpha1.ChunkSize{ChunkSize: 800}, Child: &v1alpha1.ChunkSize{ChunkSize: 160, ChunkOverlap: 16},
	}}
	if err := k8s.Create(ctx, p); err != nil {
		b.Fatal(err)
	}
	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "notes"}, Spec: v1alpha1.CorpusSpec{
		ChunkingPolicyRef: v1alpha1.PolicyReference{Name: p.Name},
		Sources:           []v1alpha1.Source{{Name: "notes", Selector: notesSelector}},
		VectorStore:       &v1alpha1.VectorStore{Embedded: &v1alpha1.EmbeddedVectorStore{Layout: v1alpha1.LayoutSegments}},
	}}
	if err := k8s.Create(ctx, c); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for c.Status.ActiveRevision == nil || c.Status.ObservedGeneration < c.Generation {
		if time.Now().After(deadline) {
			b.Fatalf("the Corpus serves no revision after 5 minutes: %+v", c.Status.Conditions)
		}
		time.Sleep(200 * time.Millisecond)
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// benchReconciler returns a Corpus reconciler on a manager of its own,
// whose caches are started but which runs no controller, counting its
// requests to the API server into counts.
func benchReconciler(b testing.TB, counts *requestCounts) *controllers.CorpusReconciler {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	cfg, err := env.ManagerConfig(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return requestCounter{rt, counts} })
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: controllers.NewScheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: controllers.CacheOptions(), Client: controllers.ClientOptions()})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("the manager's cache did not sync")
	}
	return &controllers.CorpusReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), MetadataCache: mgr.GetCache(),
		Recorder: mgr.GetEventRecorder("bench"), Image: "parentrag:test", EmbeddingCacheDir: b.TempDir()}
}

// requestCounts counts requests by verb and resource ("get-configmaps").
type requestCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounts) add(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[k]++
}

func (c *requestCounts) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

func (c *requestCounts) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = nil
}

// snapshot returns the counts.
func (c *requestCounts) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// keys returns the counted kinds of request, sorted.
func (c *requestCounts) keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.n))
}

// requestCounter counts each request it sends, but watches, which
// informers hold open.
type requestCounter struct {
	http.RoundTripper
	counts *requestCounts
}

func (r requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") != "true" {
		r.counts.add(requestKind(req))
	}
	return r.RoundTripper.RoundTrip(req)
}

// requestKind names a request by its verb and the resource in its path:
// the segment after namespaces/<ns>/, or the last plural segment.
func requestKind(req *http.Request) string {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	resource := parts[len(parts)-1]
	for i := range parts {
		if parts[i] == "namespaces" && i+2 < len(parts) {
			resource = parts[i+2]
			if i+4 < len(parts) {
				resource += "-" + parts[i+4] // status
			}
			break
		}
	}
	verb := strings.ToLower(req.Method)
	if verb == "get" && len(parts) > 0 && parts[len(parts)-1] == resource {
		verb = "list"
	}
	return verb + "-" + resource
}
