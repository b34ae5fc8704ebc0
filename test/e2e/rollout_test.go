package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
)

// docsQuestions are asked of the samples' docs Corpus in turn.
var docsQuestions = []string{
	question,
	"How does a context budget trim parents?",
	"What does the Corpus status report?",
	"How does a new revision roll out to the query pods?",
	"What does the operator create for a Retriever?",
}

// TestRolloutAnswersEveryQuery queries the samples' Retriever without pause
// through a stand-in for its Service while the chunking policy changes
// twice in quick succession, and checks that no query fails or comes back
// empty, that every answer comes from the revision of the pod it was routed
// to, and that every parent returned belongs to that revision.
func TestRolloutAnswersEveryQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane with workloads; skipped with -short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, bin, corpus, retriever := startSamples(t, ctx, "parentrag-rollout")
	ns := corpus.Namespace
	setReplicas(t, ctx, env, retriever, 2)
	first := waitServing(t, env, corpus, retriever, "")
	checkReadinessGuards(t, ctx, env, retriever)

	router, err := env.NewServiceRouter(ctx, bin, ns, retriever.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer router.Stop()
	parents := devcluster.NewRevisionParents(env.Client, corpus, t.TempDir())
	if _, err := parents.Of(ctx, first); err != nil {
		t.Fatal(err)
	}
	l := startLoad(ctx, env, corpus.Namespace, router, parents, docsQuestions, 2)
	defer l.stop()
	l.waitAnswered(t, first, 10, time.Minute, router)

	policy := changeChild(t, ctx, env, samplePolicy, v1alpha1.ChunkSize{ChunkSize: 200, ChunkOverlap: 20})
	// The second change lands while the first is still being built or rolled
	// out, not after it is served.
	time.Sleep(300 * time.Millisecond)
	policy = changeChild(t, ctx, env, samplePolicy, v1alpha1.ChunkSize{ChunkSize: 250, ChunkOverlap: 25})
	changed := time.Now()
	final := waitPolicyServed(t, ctx, env, corpus, retriever, policy.Spec.Revision(), changed, router)
	l.waitAnswered(t, final.Revision, 50, time.Minute, router)
	l.stop()

	t.Logf("policy changed twice; revision %s served %.2fs after the second change (Corpus Ready on it after %.2fs)",
		final.Revision, final.Serving.Seconds(), final.Active.Seconds())
	l.logCounts(t)
	l.check(t, router)
	if final.Revision == first {
		t.Fatalf("the policy changes did not make a new revision: still serving %s", first)
	}
}

// setReplicas sets the Retriever's replicas.
func setReplicas(t *testing.T, ctx context.Context, env *devcluster.Env, r *v1alpha1.Retriever, n int32) {
	t.Helper()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(r), r); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(r.DeepCopy())
	r.Spec.Replicas = &n
	if err := env.Client.Patch(ctx, r, patch); err != nil {
		t.Fatal(err)
	}
}

// checkReadinessGuards checks the two things of the Retriever's
// Deployment that keep a real Service answering during a rollout and that
// kwok, which marks pods Ready without probing them, cannot exercise: the
// server's container has a readiness probe on /readyz, and the rollout
// never takes a ready pod away first (maxUnavailable 0). The Router's
// holding a query for a warming server stands in for these.
func checkReadinessGuards(t *testing.T, ctx context.Context, env *devcluster.Env, r *v1alpha1.Retriever) {
	t.Helper()
	var d appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(r), &d); err != nil {
		t.Fatal(err)
	}
	ru := d.Spec.Strategy.RollingUpdate
	var unavailable int
	if ru != nil && ru.MaxUnavailable != nil {
		unavailable, _ = intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, int(r.GetReplicas()), true)
	}
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable == nil || unavailable != 0 {
		t.Errorf("Deployment %s may take ready pods away during a rollout: strategy %+v", d.Name, d.Spec.Strategy)
	}
	probe := d.Spec.Template.Spec.Containers[0].ReadinessProbe
	if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != "/readyz" {
		t.Errorf("Deployment %s: the server has no readiness probe on /readyz: %+v", d.Name, probe)
	}
}

// changeChild sets the child chunk size of a ChunkingPolicy and returns the
// policy as the API server stored it.
func changeChild(t *testing.T, ctx context.Context, env *devcluster.Env, name string, child v1alpha1.ChunkSize) *v1alpha1.ChunkingPolicy {
	t.Helper()
	var p v1alpha1.ChunkingPolicy
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &p); err != nil {
		t.Fatal(err)
	}
	p.Spec.Child = &child
	if err := env.Client.Update(ctx, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// served says when a policy change was served, counted from the change.
type served struct {
	Revision string
	// Active is when the Corpus was Ready with the revision active.
	Active time.Duration
	// Serving is when the Retriever also served it on every replica.
	Serving time.Duration
}

// waitPolicyServed waits until the Corpus is Ready with an active revision
// built from the policy revision and the Retriever serves it on every
// replica, and says when each happened.
func waitPolicyServed(t *testing.T, ctx context.Context, env *devcluster.Env, c *v1alpha1.Corpus, r *v1alpha1.Retriever, policyRevision string, since time.Time, router *devcluster.Router) served {
	t.Helper()
	return waitRevisionServed(t, ctx, env, c, r, since, router, "policy revision "+policyRevision, func(a *v1alpha1.RevisionStatus) bool {
		return a.PolicyRevision == policyRevision
	})
}

// waitRevisionServed waits until the Corpus is Ready with an active
// revision that satisfies want and the Retriever serves that revision on
// every replica, and says when each happened, counted from since. Only
// status.activeRevision of the Corpus and the Retriever's servingRevision,
// readyReplicas and Ready condition are read.
func waitRevisionServed(t *testing.T, ctx context.Context, env *devcluster.Env, c *v1alpha1.Corpus, r *v1alpha1.Retriever, since time.Time, router *devcluster.Router, what string, want func(*v1alpha1.RevisionStatus) bool) served {
	t.Helper()
	var s served
	deadline := since.Add(time.Duration(waitMinutes()) * time.Minute)
	for time.Now().Before(deadline) {
		env.Client.Get(ctx, client.ObjectKeyFromObject(c), c)
		env.Client.Get(ctx, client.ObjectKeyFromObject(r), r)
		a := c.Status.ActiveRevision
		if a != nil && want(a) && ready(c.Status.Conditions) {
			if s.Revision != a.Name {
				s.Revision, s.Active = a.Name, time.Since(since)
			}
			if r.Status.ServingRevision == a.Name && ready(r.Status.Conditions) && r.Status.ReadyReplicas == r.GetReplicas() {
				s.Serving = time.Since(since)
				return s
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s not served within %d minutes:\n%s\nkube-controller-manager:\n%s",
		what, waitMinutes(), describe(ctx, env, c.Namespace, router), env.LogTail("kube-controller-manager", 15))
	return s
}

// describe prints what a failed rollout test needs to see: the status of
// every Corpus and Retriever of the namespace, its Deployments,
// ReplicaSets and pods with their revisions, and the query servers that
// failed to start.
func describe(ctx context.Context, env *devcluster.Env, ns string, router *devcluster.Router) string {
	var b strings.Builder
	var corpora v1alpha1.CorpusList
	env.Client.List(ctx, &corpora, client.InNamespace(ns))
	for _, c := range corpora.Items {
		fmt.Fprintf(&b, "corpus %s: %+v\n", c.Name, c.Status)
	}
	var retrievers v1alpha1.RetrieverList
	env.Client.List(ctx, &retrievers, client.InNamespace(ns))
	for _, r := range retrievers.Items {
		fmt.Fprintf(&b, "retriever %s: %+v\n", r.Name, r.Status)
	}
	var deployments appsv1.DeploymentList
	env.Client.List(ctx, &deployments, client.InNamespace(ns))
	for _, d := range deployments.Items {
		fmt.Fprintf(&b, "deployment %s revision=%s: %+v\n", d.Name, d.Spec.Template.Annotations[devcluster.RevisionAnnotation], d.Status)
	}
	var sets appsv1.ReplicaSetList
	env.Client.List(ctx, &sets, client.InNamespace(ns))
	for _, rs := range sets.Items {
		fmt.Fprintf(&b, "replicaset %s revision=%s replicas=%d ready=%d\n", rs.Name, rs.Spec.Template.Annotations[devcluster.RevisionAnnotation], rs.Status.Replicas, rs.Status.ReadyReplicas)
	}
	var pods corev1.PodList
	env.Client.List(ctx, &pods, client.InNamespace(ns))
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s revision=%s node=%q phase=%s deleting=%t conditions=%v\n", p.Name, p.Annotations[devcluster.RevisionAnnotation], p.Spec.NodeName, p.Status.Phase, p.DeletionTimestamp != nil, p.Status.Conditions)
	}
	if router != nil {
		for _, err := range router.StartErrors() {
			fmt.Fprintf(&b, "query server failed: %v\n", err)
		}
	}
	return b.String()
}

// load queries through a Router without pause from a few goroutines and
// tallies every answer against what it must satisfy.
type load struct {
	env        *devcluster.Env
	namespace  string
	router     *devcluster.Router
	parents    *devcluster.RevisionParents
	questions  []string
	maxParents int

	stopOnce sync.Once
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	mu       sync.Mutex
	answered map[string]int // by the revision of the pod routed to
	// order lists the revisions that answered, first answer first.
	order   []string
	queries int
	errors  int
	empty   int
	wrong   int
	// problems are the first few errors, empty and wrong answers.
	problems []string
}

// startLoad starts workers goroutines that each ask the questions in turn
// until stop.
func startLoad(ctx context.Context, env *devcluster.Env, namespace string, router *devcluster.Router, parents *devcluster.RevisionParents, questions []string, workers int) *load {
	ctx, cancel := context.WithCancel(ctx)
	l := &load{env: env, namespace: namespace, router: router, parents: parents, questions: questions, maxParents: 3, cancel: cancel, answered: map[string]int{}}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := w; ctx.Err() == nil; i++ {
				l.ask(ctx, l.questions[i%len(l.questions)])
			}
		}()
	}
	return l
}

// ask asks one question and tallies the answer.
func (l *load) ask(ctx context.Context, q string) {
	routed, err := l.router.Retrieve(ctx, q, l.maxParents)
	if ctx.Err() != nil {
		return // stopped while asking: not an answer of the service
	}
	var problem string
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queries++
	switch {
	case err != nil:
		l.errors++
		problem = fmt.Sprintf("query %q failed: %v", q, err)
	case routed.Response.Revision != routed.Revision:
		l.wrong++
		problem = fmt.Sprintf("pod %s of revision %s answered from revision %s", routed.Pod, routed.Revision, routed.Response.Revision)
	case len(routed.Response.Results) == 0 || strings.TrimSpace(routed.Response.Results[0].Text) == "":
		l.empty++
		problem = fmt.Sprintf("pod %s (revision %s) gave an empty answer to %q", routed.Pod, routed.Revision, q)
	default:
		if l.answered[routed.Revision] == 0 {
			l.order = append(l.order, routed.Revision)
		}
		l.answered[routed.Revision]++
		problem = l.foreignParents(ctx, routed)
	}
	if problem != "" && len(l.problems) < 10 {
		l.problems = append(l.problems, problem)
	}
}

// foreignParents checks that every parent of an answer belongs to the
// revision that gave it, counting a wrong answer otherwise.
func (l *load) foreignParents(ctx context.Context, routed *devcluster.Routed) string {
	ids, err := l.parents.Of(ctx, routed.Revision)
	if err != nil {
		l.wrong++
		return err.Error()
	}
	for _, res := range routed.Response.Results {
		if !ids[res.ParentID] {
			l.wrong++
			return fmt.Sprintf("pod %s of revision %s returned parent %s (%s), which that revision does not hold", routed.Pod, routed.Revision, res.ParentID, res.DocID)
		}
	}
	return ""
}

// stop stops the workers and waits for them.
func (l *load) stop() {
	l.stopOnce.Do(func() {
		l.cancel()
		l.wg.Wait()
	})
}

// waitAnswered waits until the revision answered at least n queries,
// failing early when a query failed.
func (l *load) waitAnswered(t *testing.T, revision string, n int, timeout time.Duration, router *devcluster.Router) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		l.mu.Lock()
		got, errs := l.answered[revision], l.errors+l.empty+l.wrong
		l.mu.Unlock()
		if got >= n || errs > 0 {
			return
		}
	}
	l.stop()
	t.Fatalf("revision %s answered %v queries within %s, want %d; problems: %v\n%s", revision, l.answered, timeout, n, l.problems, describe(context.Background(), l.env, l.namespace, router))
}

// logCounts logs how many queries each revision answered, in the order
// they first answered, and how many the
// router held for a warming query server.
func (l *load) logCounts(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, rev := range l.order {
		t.Logf("revision %s answered %d queries", rev, l.answered[rev])
	}
	holds, held := l.router.Holds()
	t.Logf("%d queries: %d errors, %d empty, %d wrong; %d held for a warming query server (%.2fs in all)", l.queries, l.errors, l.empty, l.wrong, holds, held.Seconds())
}

// check fails the test unless every query was answered, from the revision
// of the pod it was routed to, with parents of that revision, and every
// query server the router started came up.
func (l *load) check(t *testing.T, router *devcluster.Router) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.errors+l.empty+l.wrong > 0 || l.queries == 0 {
		t.Errorf("of %d queries %d failed, %d came back empty and %d were answered by the wrong revision; first problems:\n%s",
			l.queries, l.errors, l.empty, l.wrong, strings.Join(l.problems, "\n"))
	}
	for _, err := range router.StartErrors() {
		t.Errorf("a query pod's server failed to start: %v", err)
	}
}
