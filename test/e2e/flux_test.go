package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
)

// The documents of the test's Git repository: docs/ is what the Corpus
// reads; README.md lies outside its path.
const (
	launchQuestion = "What is the launch code of the handbook?"
	guideBefore    = "# Launch\n\nThe launch code of the handbook is ALPHA-7. Keep it safe.\n"
	guideAfter     = "# Launch\n\nThe launch code of the handbook is BRAVO-9. Keep it safe.\n"
	faqText        = "# FAQ\n\nQuestions people ask about the handbook and its chapters.\n"
)

// TestFluxCommitReachesTheRetriever runs Flux's real source-controller and
// kustomize-controller against the control plane, serves a Git repository
// over HTTP with `git http-backend`, applies config/samples/flux (a
// GitRepository, and a Kustomization that applies the repository's
// deploy/ folder with health checks on its Corpus and Retriever), and
// follows commits through it: a commit that edits a document under the
// Corpus's path moves the GitRepository's artifact, the Corpus builds a new
// revision and names the commit in status.sourceRevision, and the
// Retriever's pods answer from it; a commit that touches only a file
// outside the path moves the artifact and status.sourceRevision, and
// builds nothing. The Kustomization's health checks pass on each commit.
func TestFluxCommitReachesTheRetriever(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane with workloads and two Flux controllers; skipped with -short")
	}
	flux := fluxControllers(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := startClusterWith(t, ctx, func(env *devcluster.Env, ctx context.Context) error {
		if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{flux.crds}, ErrorIfPathMissing: true}); err != nil {
			return fmt.Errorf("installing Flux's CRDs: %w", err)
		}
		if err := startFlux(t, env, flux); err != nil {
			return err
		}
		return env.StartWorkloads(ctx)
	})
	bin, err := env.BuildBinary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	samples := filepath.Join(env.Root, "config", "samples", "flux")
	repo := newGitRepo(t, map[string]string{"docs/guide.md": guideBefore, "docs/faq.md": faqText, "README.md": "# Handbook\n",
		"deploy/corpus.yaml": readFile(t, filepath.Join(samples, "deploy", "corpus.yaml")), "deploy/retriever.yaml": readFile(t, filepath.Join(samples, "deploy", "retriever.yaml"))})
	gitRepo, kustomization := applyFluxSamples(t, ctx, env, repo)
	corpus, retriever := &v1alpha1.Corpus{}, &v1alpha1.Retriever{}
	corpus.Namespace, corpus.Name, retriever.Namespace, retriever.Name = "docs", "handbook", "docs", "handbook"

	first := waitServing(t, env, corpus, retriever, "")
	checkSourceRevision(t, ctx, env, corpus, repo.head(t))
	checkAnswer(t, ctx, env, bin, retriever, first, "ALPHA-7")
	t.Logf("Flux Kustomization: %s", waitKustomizationHealthy(t, ctx, env, kustomization, repo.head(t)))

	repo.commit(t, "docs/guide.md", guideAfter, "Change the launch code")
	committed := time.Now()
	requestReconcile(t, ctx, env, gitRepo)
	second := waitServing(t, env, corpus, retriever, first)
	served := time.Since(committed)
	checkSourceRevision(t, ctx, env, corpus, repo.head(t))
	checkAnswer(t, ctx, env, bin, retriever, second, "BRAVO-9")
	t.Logf("commit to served: %.1fs (GitRepository reconcile requested at the push, Corpus built and promoted, %d Retriever replica rolled)", served.Seconds(), retriever.GetReplicas())

	repo.commit(t, "README.md", "# Handbook\n\nNow with a README.\n", "Touch only the README")
	requestReconcile(t, ctx, env, gitRepo)
	waitSourceRevision(t, ctx, env, corpus, repo.head(t))
	get(t, ctx, env, corpus)
	if corpus.Status.ActiveRevision.Name != second || corpus.Status.LastAttemptedRevision != second || corpus.Status.Candidate != nil {
		t.Fatalf("a commit outside the Corpus's path changed it: active %s, last attempted %s, candidate %+v; want %s and no candidate",
			corpus.Status.ActiveRevision.Name, corpus.Status.LastAttemptedRevision, corpus.Status.Candidate, second)
	}
	if b := corpus.Status.LastBuild; b == nil || b.Revision != second {
		t.Fatalf("a commit outside the Corpus's path built %+v", b)
	}
	t.Logf("Flux Kustomization: %s", waitKustomizationHealthy(t, ctx, env, kustomization, repo.head(t)))
}

// fluxBuild is what hack/flux/source-controller.sh builds: the two
// controllers and the folder of their CRDs.
type fluxBuild struct {
	sourceController, kustomizeController, crds string
}

// fluxEnv names the variables hack/flux/source-controller.sh --print sets.
var fluxEnv = []string{"PARENTRAG_SOURCE_CONTROLLER", "PARENTRAG_KUSTOMIZE_CONTROLLER", "PARENTRAG_FLUX_CRDS"}

// fluxControllers returns the Flux build, from the variables make test sets,
// else from hack/flux/source-controller.sh, which builds it once into the
// cache: the test never skips for want of it.
func fluxControllers(t *testing.T) fluxBuild {
	t.Helper()
	vars := map[string]string{}
	for _, v := range fluxEnv {
		vars[v] = os.Getenv(v)
	}
	if vars[fluxEnv[0]] == "" || vars[fluxEnv[1]] == "" || vars[fluxEnv[2]] == "" {
		root, err := filepath.Abs("../..")
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(filepath.Join(root, "hack", "flux", "source-controller.sh"), "--print").Output()
		if err != nil {
			t.Fatalf("hack/flux/source-controller.sh: %v", err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok {
				vars[k] = v
			}
		}
	}
	b := fluxBuild{vars[fluxEnv[0]], vars[fluxEnv[1]], vars[fluxEnv[2]]}
	if b.sourceController == "" || b.kustomizeController == "" || b.crds == "" {
		t.Fatalf("hack/flux/source-controller.sh --print did not name %s", strings.Join(fluxEnv, ", "))
	}
	return b
}

// startFlux runs source-controller and kustomize-controller as a cluster
// administrator, watching every namespace. source-controller's artifact
// server listens on a loopback port that it also advertises, so that
// artifact URLs reach kustomize-controller and the operator of this test.
func startFlux(t *testing.T, env *devcluster.Env, b fluxBuild) error {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(env.Config, kubeconfig); err != nil {
		return err
	}
	storage := filepath.Join(dir, "storage")
	if err := os.Mkdir(storage, 0o755); err != nil {
		return err
	}
	addr := freePort(t)
	if err := startFluxController(t, kubeconfig, b.sourceController, "--storage-path="+storage, "--storage-addr="+addr, "--storage-adv-addr="+addr); err != nil {
		return err
	}
	return startFluxController(t, kubeconfig, b.kustomizeController)
}

// startFluxController starts one Flux controller against the control plane
// and stops it when the test ends, logging the end of its log if the test
// failed.
func startFluxController(t *testing.T, kubeconfig, bin string, args ...string) error {
	name := filepath.Base(bin)
	args = append(args, "--health-addr="+freePort(t), "--metrics-addr="+freePort(t), "--enable-leader-election=false", "--watch-all-namespaces=true")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "RUNTIME_NAMESPACE=flux-system")
	logFile, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			tail, _ := os.ReadFile(logFile.Name())
			t.Logf("%s log (end):\n%s", name, lastLines(string(tail), 40))
		}
	})
	return nil
}

// writeKubeconfig writes cfg, with its client certificate, as a kubeconfig.
func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	kc.CurrentContext = "test"
	return clientcmd.WriteToFile(*kc, path)
}

// freePort returns a loopback address no one listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// gitRepo is a bare Git repository served over HTTP by git http-backend,
// and a work tree that pushes to it.
type gitRepo struct {
	url, work string
}

// newGitRepo commits files to branch main of a new repository and serves
// it over HTTP until the test ends.
func newGitRepo(t *testing.T, files map[string]string) *gitRepo {
	t.Helper()
	root := t.TempDir()
	bare, work := filepath.Join(root, "handbook.git"), filepath.Join(root, "work")
	git(t, root, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	git(t, root, "init", "--quiet", "--initial-branch=main", work)
	for name, text := range files {
		writeFile(t, filepath.Join(work, name), text)
	}
	git(t, work, "add", ".")
	git(t, work, "commit", "--quiet", "-m", "The handbook")
	git(t, work, "remote", "add", "origin", bare)
	git(t, work, "push", "--quiet", "origin", "main")
	exe, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(exe)), "git-http-backend"), Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.StripPrefix("/git", backend))
	t.Cleanup(srv.Close)
	return &gitRepo{url: srv.URL + "/git/handbook.git", work: work}
}

// commit writes one file, commits it and pushes it.
func (g *gitRepo) commit(t *testing.T, name, text, message string) {
	t.Helper()
	writeFile(t, filepath.Join(g.work, name), text)
	git(t, g.work, "commit", "--quiet", "-am", message)
	git(t, g.work, "push", "--quiet", "origin", "main")
}

// head is the commit main is on.
func (g *gitRepo) head(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(git(t, g.work, "rev-parse", "HEAD"))
}

// git runs git in dir as a fixed author and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=parentrag", "GIT_AUTHOR_EMAIL=test@parentrag.io", "GIT_COMMITTER_NAME=parentrag", "GIT_COMMITTER_EMAIL=test@parentrag.io")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// writeFile writes text to path, creating its folder.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// applyFluxSamples applies config/samples/flux as docs/gitops.md says,
// with the GitRepository's url on the test's repository: Flux then applies
// the repository's deploy/ folder into namespace docs. It returns the
// GitRepository and the Kustomization.
func applyFluxSamples(t *testing.T, ctx context.Context, env *devcluster.Env, repo *gitRepo) (*unstructured.Unstructured, *unstructured.Unstructured) {
	t.Helper()
	for _, ns := range []string{"flux-system", "docs"} {
		if err := createNamespace(ctx, env, ns); err != nil {
			t.Fatal(err)
		}
	}
	samples := filepath.Join(env.Root, "config", "samples")
	if _, err := env.Apply(ctx, "", filepath.Join(samples, "parentrag_v1alpha1_chunkingpolicy.yaml")); err != nil {
		t.Fatal(err)
	}
	objs, err := env.Apply(ctx, "flux-system", withGitURL(t, filepath.Join(samples, "flux", "gitrepository.yaml"), repo.url), filepath.Join(samples, "flux", "flux-kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return objs[0], objs[1]
}

// waitKustomizationHealthy waits until Flux's Kustomization is Ready on the
// commit, which its health checks on the Corpus and the Retriever allow
// only once both are Current for kstatus.
func waitKustomizationHealthy(t *testing.T, ctx context.Context, env *devcluster.Env, k *unstructured.Unstructured, commit string) string {
	t.Helper()
	want := "main@sha1:" + commit
	deadline := time.Now().Add(time.Duration(waitMinutes()) * time.Minute)
	var ready map[string]any
	for time.Now().Before(deadline) {
		get(t, ctx, env, k)
		applied, _, _ := unstructured.NestedString(k.Object, "status", "lastAppliedRevision")
		conds, _, _ := unstructured.NestedSlice(k.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Ready" {
				ready = m
			}
		}
		if applied == want && ready != nil && ready["status"] == "True" {
			return fmt.Sprint(ready["message"])
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("Kustomization %s not Ready on %s: %v", k.GetName(), want, ready)
	return ""
}

// withGitURL writes a copy of the GitRepository file at path with its
// spec.url set to url, and returns the copy's path.
func withGitURL(t *testing.T, path, url string) string {
	t.Helper()
	text := readFile(t, path)
	const sample = "url: https://github.com/example/handbook"
	if !strings.Contains(text, sample) {
		t.Fatalf("%s has no %q", path, sample)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	writeFile(t, out, strings.Replace(text, sample, "url: "+url, 1))
	return out
}

// readFile reads a file the test needs.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// requestReconcile asks source-controller to fetch the repository now, as
// `flux reconcile source git` and a webhook Receiver do.
func requestReconcile(t *testing.T, ctx context.Context, env *devcluster.Env, obj *unstructured.Unstructured) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, time.Now().Format(time.RFC3339Nano))
	if err := env.Client.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// checkSourceRevision checks that the Corpus names the commit it serves.
func checkSourceRevision(t *testing.T, ctx context.Context, env *devcluster.Env, c *v1alpha1.Corpus, commit string) {
	t.Helper()
	get(t, ctx, env, c)
	if want := "main@sha1:" + commit; c.Status.SourceRevision != want {
		t.Fatalf("status.sourceRevision %q, want %q", c.Status.SourceRevision, want)
	}
}

// waitSourceRevision waits until the Corpus names the commit.
func waitSourceRevision(t *testing.T, ctx context.Context, env *devcluster.Env, c *v1alpha1.Corpus, commit string) {
	t.Helper()
	want := "main@sha1:" + commit
	deadline := time.Now().Add(time.Duration(waitMinutes()) * time.Minute)
	for time.Now().Before(deadline) {
		get(t, ctx, env, c)
		if c.Status.SourceRevision == want {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("status.sourceRevision stayed %q, want %q", c.Status.SourceRevision, want)
}

// checkAnswer asks the Retriever's pods, as a pod of its Deployment runs,
// and wants the top parent to carry the launch code.
func checkAnswer(t *testing.T, ctx context.Context, env *devcluster.Env, bin string, r *v1alpha1.Retriever, revision, code string) {
	t.Helper()
	resp := retrieveLikeAPod(t, ctx, env, bin, r, revision, launchQuestion)
	top := resp.Results[0]
	if top.DocID != "handbook/docs/guide.md" || !strings.Contains(top.Text, code) {
		t.Fatalf("revision %s answered from %s, want handbook/docs/guide.md with %s:\n%s", revision, top.DocID, code, top.Text)
	}
}

// get reads obj again.
func get(t *testing.T, ctx context.Context, env *devcluster.Env, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
}
