//go:build cluster

package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
)

// TestSamplesAnswerThroughTheService applies config/samples as a user
// would and asks the Retriever's Service a question: real query pods of
// the operator's image answer from the Corpus's active revision.
func TestSamplesAnswerThroughTheService(t *testing.T) {
	ns := newNamespace(t, "samples")
	applyKustomization(t, "config/samples", ns)
	c, r := waitSamplesReady(t, ns)
	rev := c.Status.ActiveRevision.Name
	pods := waitOnlyRevision(t, ns, r.Name, rev)
	e := endpointOf(t, ns, r.Name)
	e.waitAnswering(t)
	resp, err := e.retrieve(context.Background(), docsQuestions[0], 3)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Revision != rev || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].DocID, ".md") {
		t.Fatalf("answer from revision %s with %d results (%+v), want revision %s with docs", resp.Revision, len(resp.Results), resp.Results, rev)
	}
	for _, p := range pods {
		if p.Spec.Containers[0].Image != image || !podReady(&p) || p.Annotations["parentrag.io/revision"] != rev {
			t.Errorf("pod %s: image %s ready %t revision %s", p.Name, p.Spec.Containers[0].Image, podReady(&p), p.Annotations["parentrag.io/revision"])
		}
	}
	if len(pods) != int(r.GetReplicas()) || restarts(pods) != 0 {
		t.Errorf("%d query pods with %d restarts, want %d with none", len(pods), restarts(pods), r.GetReplicas())
	}
	t.Logf("revision %s (%d documents, %d parents, %d children) answered %q with %s through the Service, from %d pods",
		rev[:8], c.Status.ActiveRevision.Documents, c.Status.ActiveRevision.Parents, c.Status.ActiveRevision.Children,
		docsQuestions[0], resp.Results[0].DocID, len(pods))
}

// TestPolicyChangesUnderLoadThroughTheService queries the samples'
// Retriever through its Service without pause while the policy changes
// twice, the second change landing while the first one's rollout is under
// way, with retainRevisions 1. No query may fail or come back with a
// parent of another revision than the answering pod's; every pod's
// revision stays loadable while the pod runs; no pod restarts; and the
// Corpus stays Ready throughout.
func TestPolicyChangesUnderLoadThroughTheService(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "rollout")
	applyKustomization(t, "config/samples", ns)
	c, r := waitSamplesReady(t, ns)
	t.Cleanup(func() { resetPolicy(t) })
	patchCorpus(t, c, func(c *v1alpha1.Corpus) { c.Spec.RetainRevisions = 1 })
	first := c.Status.ActiveRevision.Name

	readySeen := watchCorpusReady(t, c)
	guard := startLoadableGuard(t, ns, c.Name, r.Name)
	e := endpointOf(t, ns, r.Name)
	e.waitAnswering(t)
	l := startLoad(ctx, e, devcluster.NewRevisionParents(k8s, c, t.TempDir()), 4)
	defer l.stop()
	eventually(t, time.Minute, "the first revision to answer", func() (bool, error) { return l.answeredBy(first) >= 10, nil })

	setChild(t, 200, 20)
	second := waitRollingOut(t, ns, r.Name, first)
	changed := time.Now()
	setChild(t, 250, 25)
	final := waitServedAfter(t, c, r, second, first)
	served := time.Since(changed)
	eventually(t, time.Minute, "the final revision to answer", func() (bool, error) { return l.answeredBy(final) >= 20, nil })
	l.stop()

	t.Logf("policy changed twice (the second during the first one's rollout); revision %s served on every replica %.1fs after the second change", final[:8], served.Seconds())
	t.Logf("%s", l.summary())
	l.check(t)
	guard.check(t)
	for _, st := range readySeen() {
		if !strings.HasPrefix(st, "True/") {
			t.Errorf("the Corpus's Ready left True while a revision served: %v", readySeen())
			break
		}
	}
	if n := restarts(retrieverPods(t, ns, r.Name)); n != 0 {
		t.Errorf("query pods restarted %d times", n)
	}
}

// patchCorpus changes the Corpus with a merge patch.
func patchCorpus(t *testing.T, c *v1alpha1.Corpus, change func(*v1alpha1.Corpus)) {
	t.Helper()
	get(t, c)
	patch := client.MergeFrom(c.DeepCopy())
	change(c)
	if err := k8s.Patch(context.Background(), c, patch); err != nil {
		t.Fatal(err)
	}
}

// setChild sets the samples' policy's child chunk size.
func setChild(t *testing.T, size, overlap int) {
	t.Helper()
	p := &v1alpha1.ChunkingPolicy{ObjectMeta: metav1.ObjectMeta{Name: samplesPolicy}}
	get(t, p)
	patch := client.MergeFrom(p.DeepCopy())
	p.Spec.Child = &v1alpha1.ChunkSize{ChunkSize: size, ChunkOverlap: overlap}
	if err := k8s.Patch(context.Background(), p, patch); err != nil {
		t.Fatal(err)
	}
}

// resetPolicy puts the samples' policy back as config/samples has it.
func resetPolicy(t *testing.T) { setChild(t, 300, 30) }

// waitRollingOut waits until the Retriever's Deployment rolls out a
// revision other than previous, and returns it.
func waitRollingOut(t *testing.T, ns, name, previous string) string {
	t.Helper()
	var rev string
	eventually(t, 3*time.Minute, "the Deployment to roll out a new revision", func() (bool, error) {
		var d appsv1.Deployment
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
			return false, err
		}
		rev = d.Spec.Template.Annotations["parentrag.io/revision"]
		return rev != previous, nil
	})
	return rev
}

// waitServedAfter waits until the Corpus is Ready on a revision other than
// the given ones and every replica of the Retriever serves it.
func waitServedAfter(t *testing.T, c *v1alpha1.Corpus, r *v1alpha1.Retriever, not ...string) string {
	t.Helper()
	var rev string
	eventually(t, 4*time.Minute, "a new revision to be served on every replica", func() (bool, error) {
		get(t, c)
		get(t, r)
		a := c.Status.ActiveRevision
		if a == nil || c.Status.ObservedGeneration != c.Generation {
			return false, nil
		}
		for _, n := range not {
			if a.Name == n {
				return false, nil
			}
		}
		rev = a.Name
		return r.Status.ServingRevision == rev && r.Status.ReadyReplicas == r.GetReplicas() && readyCondition(r.Status.Conditions).Status == "True",
			fmt.Errorf("retriever %+v", r.Status)
	})
	return rev
}

// watchCorpusReady records every status and reason of the Corpus's Ready
// condition that a watch delivers, until the returned function is called.
func watchCorpusReady(t *testing.T, c *v1alpha1.Corpus) func() []string {
	t.Helper()
	w, err := k8s.Watch(context.Background(), &v1alpha1.CorpusList{}, client.InNamespace(c.Namespace), client.MatchingFields{"metadata.name": c.Name})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	go func() {
		for ev := range w.ResultChan() {
			if got, ok := ev.Object.(*v1alpha1.Corpus); ok {
				ready := readyCondition(got.Status.Conditions)
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%s/%s", ready.Status, ready.Reason))
				mu.Unlock()
			}
		}
	}()
	var once sync.Once
	return func() []string {
		once.Do(w.Stop)
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// loadableGuard checks, every 200 ms, that each running query pod's
// revision can still be loaded: its manifest ConfigMap exists and the
// query Role allows it, so a pod that restarts comes back.
type loadableGuard struct {
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	problems []string
	checks   int
}

// startLoadableGuard starts the guard; it stops when the test ends.
func startLoadableGuard(t *testing.T, ns, corpus, retriever string) *loadableGuard {
	g := &loadableGuard{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(g.done)
		for {
			select {
			case <-g.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			g.look(ns, corpus, retriever)
		}
	}()
	t.Cleanup(g.halt)
	return g
}

// look checks the running pods once.
func (g *loadableGuard) look(ns, corpus, retriever string) {
	ctx := context.Background()
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"parentrag.io/retriever": retriever}); err != nil {
		return
	}
	var role rbacv1.Role
	roleErr := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: retriever}, &role)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.checks++
	for _, p := range pods.Items {
		rev := p.Annotations["parentrag.io/revision"]
		if p.DeletionTimestamp != nil || rev == "" {
			continue
		}
		manifest := corpus + "-" + rev[:8]
		var cm corev1.ConfigMap
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: manifest}, &cm); err != nil && len(g.problems) < 10 {
			g.problems = append(g.problems, fmt.Sprintf("pod %s runs revision %s, whose manifest ConfigMap cannot be read: %v", p.Name, rev[:8], err))
		}
		if roleErr == nil && !roleAllows(&role, manifest) && len(g.problems) < 10 {
			g.problems = append(g.problems, fmt.Sprintf("pod %s runs revision %s, which the query Role does not allow", p.Name, rev[:8]))
		}
	}
}

// halt stops the guard.
func (g *loadableGuard) halt() {
	select {
	case <-g.stop:
	default:
		close(g.stop)
	}
	<-g.done
}

// check stops the guard and fails the test with what it saw.
func (g *loadableGuard) check(t *testing.T) {
	t.Helper()
	g.halt()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.problems) > 0 {
		t.Errorf("in %d checks, a running pod's revision could not be loaded:\n%s", g.checks, strings.Join(g.problems, "\n"))
	}
	t.Logf("every running query pod's revision stayed loadable in %d checks", g.checks)
}

// roleAllows reports whether the Role allows get on the ConfigMap.
func roleAllows(r *rbacv1.Role, configMap string) bool {
	for _, rule := range r.Rules {
		if slices.Contains(rule.Resources, "configmaps") && slices.Contains(rule.Verbs, "get") && slices.Contains(rule.ResourceNames, configMap) {
			return true
		}
	}
	return false
}

// TestQueryPodsRestartedUnder64Clients restarts the samples' query
// Deployment (a rolling restart) and then deletes one of its pods while 64
// clients query it through its Service without pause. Every query gets an
// answer: none fails or is lost, and none holds a parent of another
// revision; refusals by admission (503 or 429 with Retry-After) are
// counted apart.
func TestQueryPodsRestartedUnder64Clients(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "restart")
	applyKustomization(t, "config/samples", ns)
	c, r := waitSamplesReady(t, ns)
	rev := c.Status.ActiveRevision.Name
	e := endpointOf(t, ns, r.Name)
	e.waitAnswering(t)
	l := startLoad(ctx, e, devcluster.NewRevisionParents(k8s, c, t.TempDir()), 64)
	defer l.stop()
	eventually(t, time.Minute, "64 clients to be answered", func() (bool, error) { return l.answeredBy(rev) >= 200, nil })

	start := time.Now()
	kubectl(t, "-n", ns, "rollout", "restart", "deployment/"+r.Name)
	kubectl(t, "-n", ns, "rollout", "status", "deployment/"+r.Name, "--timeout=3m")
	waitOnlyRevision(t, ns, r.Name, rev)
	restarted := time.Since(start)
	before := l.answeredBy(rev)
	victim := runningPods(t, ns, r.Name)[0].Name
	kubectl(t, "-n", ns, "delete", "pod", victim, "--wait=false")
	eventually(t, 3*time.Minute, "the deleted pod to be replaced", func() (bool, error) {
		ready := 0
		for _, p := range runningPods(t, ns, r.Name) {
			if p.Name == victim {
				return false, nil
			}
			if podReady(&p) {
				ready++
			}
		}
		return ready == int(*r.Spec.Replicas), nil
	})
	eventually(t, time.Minute, "queries after the replacement", func() (bool, error) { return l.answeredBy(rev) >= before+200, nil })
	l.stop()
	t.Logf("rolling restart done in %.1fs, pod %s deleted and replaced", restarted.Seconds(), victim)
	t.Logf("%s", l.summary())
	l.check(t)
}
