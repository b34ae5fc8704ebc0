// Command demo shows parentrag end to end on a real control plane built by
// hack/control-plane.sh: it starts kube-apiserver, etcd, the Deployment
// controller, the scheduler and a kwok node, installs the CRDs, runs the
// operator, applies config/samples (parentrag's own docs as the corpus),
// answers questions through `parentrag serve` exactly as a query pod runs
// it, then changes the chunk size and shows the new revision taking over.
// Everything it starts is stopped when it ends or is interrupted.
//
//	make demo
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/devcluster"
)

const namespace = "parentrag-demo"

// questions are asked of each revision.
var questions = []string{
	"Why split documents into parents and children?",
	"How does a context budget trim parents?",
	"What happens to the serving revision when a build fails?",
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// run is the demo, step by step; it ends with what the user saw and what
// to try next.
func run(ctx context.Context) error {
	start := time.Now()
	step("starting kube-apiserver and etcd, installing the CRDs")
	env, err := devcluster.Start()
	if err != nil {
		return err
	}
	defer func() { step("stopping everything the demo started"); env.Stop() }()
	step("starting kube-controller-manager, kube-scheduler and a kwok node")
	if err := env.StartWorkloads(ctx); err != nil {
		return err
	}
	step("building the parentrag binary the query pods run")
	bin, err := env.BuildBinary(os.TempDir())
	if err != nil {
		return err
	}
	if err := startOperator(ctx, env); err != nil {
		return err
	}
	step("applying config/samples in namespace " + namespace)
	if err := applySamples(ctx, env); err != nil {
		return err
	}
	d := &demo{env: env, bin: bin,
		corpus:    &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "parentrag-docs"}},
		retriever: &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "parentrag-docs"}}}
	ready := time.Now()
	first, err := d.waitServing(ctx, "")
	if err != nil {
		return err
	}
	d.saw = append(d.saw, fmt.Sprintf("revision %s indexed and served in %s: %s", v1alpha1.ShortRevision(first), since(ready), revisionCounts(d.corpus.Status.ActiveRevision)))
	if err := d.ask(ctx, first); err != nil {
		return err
	}
	step("pointing the Corpus at the parentrag-sample-handbook-fine policy: children of 150 characters instead of 300")
	if err := usePolicy(ctx, env.Client, d.corpus, "parentrag-sample-handbook-fine"); err != nil {
		return err
	}
	changed := time.Now()
	second, err := d.waitServing(ctx, first)
	if err != nil {
		return err
	}
	d.saw = append(d.saw, fmt.Sprintf("revision %s built beside %s and rolled out in %s: %s; %s stays retained for rollback",
		v1alpha1.ShortRevision(second), v1alpha1.ShortRevision(first), since(changed), revisionCounts(d.corpus.Status.ActiveRevision), v1alpha1.ShortRevision(first)))
	if err := d.ask(ctx, second); err != nil {
		return err
	}
	d.summary(since(start))
	return nil
}

// summary says what the demo showed and what to try next.
func (d *demo) summary(took string) {
	step(fmt.Sprintf("what you saw (%s in all)", took))
	for _, line := range d.saw {
		fmt.Println("  - " + line)
	}
	fmt.Printf("  - %d questions answered by `parentrag serve` as a query pod runs it, each with the parents of its best children\n", 2*len(questions))
	step("what to try next")
	for _, line := range []string{
		"your own files, no cluster:   make build && bin/parentrag local index --out /tmp/idx <folder> && bin/parentrag local query --index /tmp/idx \"<question>\"",
		"a real node with real pods:   make cluster-up, then docs/cluster.md (kubectl apply -k config/cluster, the samples, a query through the Service)",
		"a safe rollout with a gate:   config/samples/rollout and docs/rollout.md",
		"every field of the objects:   docs/spec/corpus.md, docs/spec/retriever.md",
	} {
		fmt.Println("  " + line)
	}
}

// since is the time elapsed since t, to the tenth of a second.
func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }

// revisionCounts says what a revision holds.
func revisionCounts(a *v1alpha1.RevisionStatus) string {
	return fmt.Sprintf("%d documents, %d parents, %d children", a.Documents, a.Parents, a.Children)
}

// startOperator runs the three controllers in this process.
func startOperator(ctx context.Context, env *devcluster.Env) error {
	step("starting the parentrag operator")
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: controllers.NewScheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return err
	}
	if err := controllers.Setup(mgr, controllers.Options{Image: "parentrag:demo"}); err != nil {
		return err
	}
	go mgr.Start(ctx)
	return nil
}

// applySamples creates the namespace and applies every sample.
func applySamples(ctx context.Context, env *devcluster.Env) error {
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return err
	}
	files, err := env.SampleFiles()
	if err != nil {
		return err
	}
	objs, err := env.Apply(ctx, namespace, files...)
	for _, o := range objs {
		fmt.Printf("  %s/%s applied\n", strings.ToLower(o.GetKind()), o.GetName())
	}
	return err
}

// usePolicy points the Corpus at another ChunkingPolicy, the namespaced way
// to change its chunking: the samples' cluster-scoped policies stay as every
// namespace applied them.
func usePolicy(ctx context.Context, c client.Client, corpus *v1alpha1.Corpus, policy string) error {
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"chunkingPolicyRef":{"name":%q}}}`, policy)))
	return c.Patch(ctx, corpus.DeepCopy(), patch)
}

// demo holds what the steps share.
type demo struct {
	env       *devcluster.Env
	bin       string
	corpus    *v1alpha1.Corpus
	retriever *v1alpha1.Retriever
	// saw are the lines of the closing summary.
	saw []string
}

// waitServing waits until a revision other than previous is active and
// every query pod serves it, printing progress as it changes.
func (d *demo) waitServing(ctx context.Context, previous string) (string, error) {
	step("waiting for the Corpus to index and the Retriever to roll out")
	last := ""
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); {
		d.env.Client.Get(ctx, client.ObjectKeyFromObject(d.corpus), d.corpus)
		d.env.Client.Get(ctx, client.ObjectKeyFromObject(d.retriever), d.retriever)
		if line := d.statusLine(); line != last {
			fmt.Println("  " + line)
			last = line
		}
		a := d.corpus.Status.ActiveRevision
		if a != nil && a.Name != previous && d.retriever.Status.ServingRevision == a.Name && d.retriever.Status.ReadyReplicas == d.retriever.GetReplicas() {
			return a.Name, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("no new revision served within 5 minutes")
}

// statusLine summarises both objects as kubectl get would.
func (d *demo) statusLine() string {
	corpus, rev := condition(d.corpus.Status.Conditions), "-"
	if a := d.corpus.Status.ActiveRevision; a != nil {
		rev = fmt.Sprintf("%s (%d docs, %d parents, %d children)", v1alpha1.ShortRevision(a.Name), a.Documents, a.Parents, a.Children)
	}
	rt := d.retriever.Status
	return fmt.Sprintf("corpus: %s, active %s | retriever: %s, serving %s, %d/%d ready",
		corpus, rev, condition(rt.Conditions), v1alpha1.ShortRevision(orDash(rt.ServingRevision)), rt.ReadyReplicas, d.retriever.GetReplicas())
}

// ask runs the query server as a pod of the Deployment would and asks
// every question, printing the parents' context.
func (d *demo) ask(ctx context.Context, revision string) error {
	var dep appsv1.Deployment
	if err := d.env.Client.Get(ctx, client.ObjectKeyFromObject(d.retriever), &dep); err != nil {
		return err
	}
	step(fmt.Sprintf("querying revision %s through `parentrag %s`", v1alpha1.ShortRevision(revision), strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " ")))
	srv, err := d.env.StartServe(ctx, d.bin, &dep)
	if err != nil {
		return err
	}
	defer srv.Stop()
	if err := srv.WaitReady(time.Minute); err != nil {
		return fmt.Errorf("%w\n%s", err, srv.Log())
	}
	for _, q := range questions {
		resp, err := srv.Retrieve(ctx, q, 2)
		if err != nil {
			return err
		}
		fmt.Printf("\n  Q: %s\n", q)
		for i, r := range resp.Results {
			fmt.Printf("  %d. %s  score %.2f  revision %s\n", i+1, r.DocID, r.Score, v1alpha1.ShortRevision(resp.Revision))
			fmt.Println(indent(excerpt(r.Text, 420), "     | "))
		}
	}
	fmt.Println()
	return nil
}

// step prints a heading.
func step(s string) { fmt.Printf("\n==> %s\n", s) }

// condition renders the Ready condition as "Ready=True (reason)".
func condition(conds []metav1.Condition) string {
	for _, c := range conds {
		if c.Type == v1alpha1.ConditionReady {
			return fmt.Sprintf("Ready=%s (%s)", c.Status, c.Reason)
		}
	}
	return "Ready=-"
}

// excerpt shortens text to about n characters at a word boundary.
func excerpt(text string, n int) string {
	text = strings.TrimSpace(text)
	if len(text) <= n {
		return text
	}
	cut := strings.LastIndex(text[:n], " ")
	return text[:max(cut, 0)] + " …"
}

// indent prefixes every line.
func indent(text, prefix string) string {
	return prefix + strings.ReplaceAll(text, "\n", "\n"+prefix)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
