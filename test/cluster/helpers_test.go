//go:build cluster

package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/kubetest"
	"github.com/parentrag/parentrag/internal/server"
)

// The samples' names.
const (
	samplesCorpus    = "parentrag-docs"
	samplesRetriever = "parentrag-docs"
	samplesPolicy    = "parentrag-sample-handbook"
)

var nameSeq atomic.Int64

// newNamespace creates a namespace for one test and deletes it when the
// test ends. The finalizers of its Corpora and Retrievers must then
// release everything they own: the suite checks that at its end
// (checkReleased), so that one test's release overlaps the next test
// rather than adding to the suite's time. Kubernetes removes the namespace
// itself later still, once its pods' grace period (30 s for query pods)
// has passed, which says nothing about parentrag.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d-%d", prefix, os.Getpid()%10000, nameSeq.Add(1))}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("state of namespace %s:\n%s", ns.Name, describe(context.Background(), ns.Name))
		}
		if err := k8s.Delete(context.Background(), ns); err != nil {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
			return
		}
		deleted.Lock()
		deleted.namespaces = append(deleted.namespaces, ns.Name)
		deleted.Unlock()
	})
	return ns.Name
}

// deleted lists the namespaces the tests have deleted so far.
var deleted struct {
	sync.Mutex
	namespaces []string
}

// checkReleased waits up to timeout until no Corpus and no Retriever is
// left in any namespace a test deleted, and names the namespaces that
// still hold one when some do.
func checkReleased(ctx context.Context, timeout time.Duration) error {
	deleted.Lock()
	left := slices.Clone(deleted.namespaces)
	deleted.Unlock()
	return poll(timeout, "the Corpora and Retrievers of deleted namespaces to be released", func() (bool, error) {
		var err error
		left = slices.DeleteFunc(left, func(ns string) bool {
			ok, e := namespaceReleased(ctx, ns)
			err = errors.Join(err, e)
			return ok
		})
		return len(left) == 0, fmt.Errorf("left: %s %v", strings.Join(left, ", "), err)
	})
}

// namespaceReleased reports whether no Corpus and no Retriever is left
// in namespace (a gone namespace holds none).
func namespaceReleased(ctx context.Context, namespace string) (bool, error) {
	var corpora v1alpha1.CorpusList
	if err := k8s.List(ctx, &corpora, client.InNamespace(namespace)); err != nil {
		return false, err
	}
	var retrievers v1alpha1.RetrieverList
	if err := k8s.List(ctx, &retrievers, client.InNamespace(namespace)); err != nil {
		return false, err
	}
	return len(corpora.Items) == 0 && len(retrievers.Items) == 0, nil
}

// applyKustomization applies the kustomization in dir (relative to the
// repository root) into namespace, as kubectl apply -n NS -k DIR
// --server-side does, and returns the objects.
func applyKustomization(t *testing.T, dir, namespace string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := devcluster.RenderKustomization(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		namespaced, err := k8s.IsObjectNamespaced(o)
		if err != nil {
			t.Fatal(err)
		}
		if namespaced {
			o.SetNamespace(namespace)
		}
	}
	if err := applyAll(context.Background(), objs); err != nil {
		t.Fatal(err)
	}
	return objs
}

// eventually polls cond every 200ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	if err := poll(timeout, what, cond); err != nil {
		t.Fatal(err)
	}
}

// poll is eventually without a test: it returns an error naming what and
// cond's last error when cond did not hold within timeout.
func poll(timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return nil
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("timed out after %s waiting for %s (last: %v)", timeout, what, last)
}

// get refreshes obj from the API server.
func get(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
}

// kstatusOf computes an object's kstatus from what the API server holds.
func kstatusOf(t *testing.T, obj client.Object) *status.Result {
	t.Helper()
	get(t, obj)
	res, err := kubetest.Kstatus(k8s.Scheme(), obj)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// waitCurrent waits until kstatus calls obj Current with its generation
// observed, as Flux's health checks do.
func waitCurrent(t *testing.T, obj client.Object, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("%T %s to be Current", obj, obj.GetName()), func() (bool, error) {
		res := kstatusOf(t, obj)
		observed, err := observedGeneration(obj)
		if err != nil {
			return false, err
		}
		// kstatus calls an object with no status at all Current: one the
		// operator has not reconciled yet must not pass.
		return res.Status == status.CurrentStatus && observed == obj.GetGeneration(),
			fmt.Errorf("%s: %s (observed generation %d of %d)", res.Status, res.Message, observed, obj.GetGeneration())
	})
}

// observedGeneration reads status.observedGeneration of obj, 0 when it
// has none.
func observedGeneration(obj client.Object) (int64, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return 0, err
	}
	g, _, err := unstructured.NestedInt64(u, "status", "observedGeneration")
	return g, err
}

// waitSamplesReady waits as a user would, with kubectl wait, until the
// samples' Corpus and Retriever are Ready, then checks that kstatus calls
// both Current, and returns them.
func waitSamplesReady(t *testing.T, ns string) (*v1alpha1.Corpus, *v1alpha1.Retriever) {
	t.Helper()
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=5m", "corpus/"+samplesCorpus, "retriever/"+samplesRetriever)
	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: samplesCorpus}}
	r := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: samplesRetriever}}
	waitCurrent(t, c, time.Minute)
	waitCurrent(t, r, time.Minute)
	return c, r
}

// readyCondition returns an object's Ready condition, or an empty one.
func readyCondition(conds []metav1.Condition) metav1.Condition {
	if c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// serviceEndpoint reaches a Service the way the suite is told to: at its
// ClusterIP through kube-proxy, or through the API server's service proxy.
type serviceEndpoint struct {
	url    string
	client *http.Client
}

// endpointOf returns how to reach the Retriever's Service.
func endpointOf(t *testing.T, ns, name string) *serviceEndpoint {
	t.Helper()
	var svc corev1.Service
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &svc); err != nil {
		t.Fatal(err)
	}
	port := svc.Spec.Ports[0]
	switch access := envOr("PARENTRAG_SERVICE_ACCESS", "clusterip"); access {
	case "clusterip":
		return &serviceEndpoint{
			url:    fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, port.Port),
			client: &http.Client{Timeout: 15 * time.Second},
		}
	case "proxy":
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hc.Timeout = 15 * time.Second
		return &serviceEndpoint{
			url:    fmt.Sprintf("%s/api/v1/namespaces/%s/services/%s:%s/proxy", strings.TrimSuffix(cfg.Host, "/"), ns, name, port.Name),
			client: hc,
		}
	default:
		t.Fatalf("PARENTRAG_SERVICE_ACCESS=%q: want clusterip or proxy", access)
		return nil
	}
}

// waitAnswering waits until the Service answers a query: kube-proxy
// programs a new Service's endpoints a moment after its pods turn Ready,
// and until then a connection to its ClusterIP is refused.
func (e *serviceEndpoint) waitAnswering(t *testing.T) {
	t.Helper()
	eventually(t, time.Minute, "the Service to answer", func() (bool, error) {
		_, err := e.retrieve(context.Background(), docsQuestions[0], 1)
		return err == nil, err
	})
}

// retrieve asks the Service one question.
func (e *serviceEndpoint) retrieve(ctx context.Context, query string, maxParents int) (*server.RetrieveResponse, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "maxParents": maxParents})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/v1/retrieve", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), msg: fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(data)))}
	}
	var out server.RetrieveResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decoding %q: %w", data, err)
	}
	return &out, nil
}

// statusError is an answer other than 200.
type statusError struct {
	code       int
	retryAfter string
	msg        string
}

func (e *statusError) Error() string { return e.msg }

// retryLater reports whether the answer is admission's refusal: 503 or
// 429 with Retry-After.
func (e *statusError) retryLater() bool {
	return (e.code == http.StatusServiceUnavailable || e.code == http.StatusTooManyRequests) && e.retryAfter != ""
}

// revisionConfigMaps lists the ConfigMaps of a Corpus's revision, or of
// all its revisions when revision is "".
func revisionConfigMaps(t *testing.T, ns, corpus, revision string) []corev1.ConfigMap {
	t.Helper()
	sel := client.MatchingLabels{"parentrag.io/corpus": corpus}
	if revision != "" {
		sel["parentrag.io/revision"] = revision
	}
	var list corev1.ConfigMapList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns), sel); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// retrieverPods lists the query pods of a Retriever.
func retrieverPods(t *testing.T, ns, retriever string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := k8s.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"parentrag.io/retriever": retriever}); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// waitOnlyRevision waits until every pod of the Retriever runs the
// revision: the old pods of a rollout answer for their shutdown delay
// while the Service's endpoints stop routing to them, and are then gone.
func waitOnlyRevision(t *testing.T, ns, retriever, revision string) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	eventually(t, time.Minute, "only pods of revision "+revision+" to run", func() (bool, error) {
		pods = retrieverPods(t, ns, retriever)
		for _, p := range pods {
			if p.DeletionTimestamp != nil || p.Annotations["parentrag.io/revision"] != revision {
				return false, fmt.Errorf("pod %s of revision %s (terminating %t)", p.Name, p.Annotations["parentrag.io/revision"], p.DeletionTimestamp != nil)
			}
		}
		return true, nil
	})
	return pods
}

// restarts counts the container restarts of pods.
func restarts(pods []corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			n += cs.RestartCount
		}
	}
	return n
}

// describe reports what a failed test needs to see: the namespace's
// Corpora and Retrievers, its pods with their revisions, Jobs, claims,
// recent events, and the end of the operator's log.
func describe(ctx context.Context, ns string) string {
	var b strings.Builder
	var corpora v1alpha1.CorpusList
	k8s.List(ctx, &corpora, client.InNamespace(ns))
	for _, c := range corpora.Items {
		fmt.Fprintf(&b, "corpus %s: conditions %v active %v\n", c.Name, c.Status.Conditions, c.Status.ActiveRevision)
	}
	var retrievers v1alpha1.RetrieverList
	k8s.List(ctx, &retrievers, client.InNamespace(ns))
	for _, r := range retrievers.Items {
		fmt.Fprintf(&b, "retriever %s: %+v\n", r.Name, r.Status)
	}
	b.WriteString(podsReport(ctx, ns))
	var events corev1.EventList
	k8s.List(ctx, &events, client.InNamespace(ns))
	for _, e := range events.Items[max(0, len(events.Items)-20):] {
		fmt.Fprintf(&b, "event %s %s/%s %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
	b.WriteString("operator log:\n" + operatorLogTail(ctx, 30))
	return b.String()
}

// podsReport lists the pods of a namespace with their revision, phase,
// readiness and restarts, and the last log lines of those not ready.
func podsReport(ctx context.Context, ns string) string {
	var b strings.Builder
	var pods corev1.PodList
	k8s.List(ctx, &pods, client.InNamespace(ns))
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s revision=%s phase=%s ready=%t restarts=%d deleting=%t\n", p.Name, p.Annotations["parentrag.io/revision"],
			p.Status.Phase, podReady(&p), restarts([]corev1.Pod{p}), p.DeletionTimestamp != nil)
		if !podReady(&p) {
			for _, cs := range p.Status.ContainerStatuses {
				fmt.Fprintf(&b, "  container %s: %+v\n", cs.Name, cs.State)
			}
			b.WriteString(indent(podLogTail(ctx, ns, p.Name, 10)))
		}
	}
	return b.String()
}

// podReady reports whether a pod's Ready condition is True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podLogTail returns the last lines of a pod's log.
func podLogTail(ctx context.Context, ns, pod string, lines int64) string {
	data, err := clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{TailLines: &lines}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(no log: %v)\n", err)
	}
	return string(data)
}

// operatorLogTail returns the last lines of the operator's log.
func operatorLogTail(ctx context.Context, lines int64) string {
	p, err := operatorPod(ctx)
	if err != nil {
		return err.Error() + "\n"
	}
	return podLogTail(ctx, devcluster.ManagerNamespace, p.Name, lines)
}

// indent indents every line of s.
func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}
