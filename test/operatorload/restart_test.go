// Package operatorload measures the operator as a cluster makes it live:
// its memory at idle and how soon it reconciles after a restart, with much
// of what it could watch in the cluster.
package operatorload

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/devcluster"
)

// BenchmarkOperatorRestart fills a real kube-apiserver with
// PARENTRAG_RESTART_MIB (default 1024) MiB of revision ConfigMaps, shards
// of 900 KiB of 200 revisions of 50 Corpora, and 10,000 unrelated
// ConfigMaps and 10,000 Secrets, and serves the samples' Corpus. Each
// iteration starts the real parentrag binary's manager as a separate
// process under the shipped RBAC, with the Corpus asking for a reconcile
// (reconcile.fluxcd.io/requestedAt), and reports the seconds from the
// process's start to the status that echoes it (first-reconcile-s), its
// resident memory after 10 s at idle (idle-rss-MiB, VmRSS of
// /proc/<pid>/status) and its peak (peak-rss-MiB, VmHWM).
//
//	eval "$(hack/control-plane.sh --print)"
//	go test -run '^$' -bench OperatorRestart -benchtime 3x -timeout 30m ./test/operatorload/
func BenchmarkOperatorRestart(b *testing.B) {
	f := filled(b)
	var reconcile, idle, peak float64
	b.ResetTimer()
	for i := range b.N {
		r := restartOnce(b, f.env.Client, f.bin, f.kubeconfig, f.corpus, fmt.Sprintf("restart-%d-%d", time.Now().UnixNano(), i))
		reconcile += r.firstReconcile.Seconds()
		idle = max(idle, r.idleRSS)
		peak = max(peak, r.peakRSS)
		b.Logf("restart %d: first reconcile after %.2fs, idle RSS %.0f MiB, peak %.0f MiB", i, r.firstReconcile.Seconds(), r.idleRSS, r.peakRSS)
	}
	b.StopTimer()
	b.ReportMetric(reconcile/float64(b.N), "first-reconcile-s")
	b.ReportMetric(idle, "idle-rss-MiB")
	b.ReportMetric(peak, "peak-rss-MiB")
}

// fixture is the filled control plane, shared by the runs of the
// benchmark (the testing package calls it with b.N 1 first) and stopped by
// TestMain.
type fixture struct {
	env                     *devcluster.Env
	bin, kubeconfig, binDir string
	corpus                  client.ObjectKey
}

var (
	fixtureOnce sync.Once
	shared      *fixture
	fixtureErr  error
)

// TestMain stops the control plane the benchmark started, if it did.
func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard())
	code := m.Run()
	if shared != nil {
		shared.env.Stop()
		os.RemoveAll(shared.binDir)
	}
	os.Exit(code)
}

// filled starts the control plane, builds the binary and fills the
// cluster, once per process.
func filled(b *testing.B) *fixture {
	fixtureOnce.Do(func() { fixtureErr = fill(b) })
	if fixtureErr != nil {
		b.Fatal(fixtureErr)
	}
	return shared
}

// fill makes the shared fixture: the control plane with the shipped RBAC,
// the binary, the objects and the samples served.
func fill(b *testing.B) error {
	ctx := context.Background()
	env, err := devcluster.Start()
	if err != nil {
		return err
	}
	f := &fixture{env: env}
	shared = f // stopped by TestMain from now on
	if _, err := env.ManagerConfig(ctx); err != nil {
		return err
	}
	if f.kubeconfig, err = env.ServiceAccountKubeconfig(ctx, devcluster.ManagerNamespace, devcluster.ManagerServiceAccount); err != nil {
		return err
	}
	if f.binDir, err = os.MkdirTemp("", "parentrag-restart-*"); err != nil {
		return err
	}
	if f.bin, err = buildBinary(env.Root, f.binDir); err != nil {
		return err
	}
	start := time.Now()
	mib, err := restartMiB()
	if err != nil {
		return err
	}
	if err := createObjects(env.Client, mib); err != nil {
		return err
	}
	b.Logf("%d MiB of revision ConfigMaps, 10,000 ConfigMaps and 10,000 Secrets created in %s", mib, time.Since(start).Round(time.Second))
	f.corpus = serveSamples(b, env, f.bin, f.kubeconfig)
	return nil
}

// restartMiB is PARENTRAG_RESTART_MIB, the MiB of revision ConfigMaps.
func restartMiB() (int, error) {
	v := os.Getenv("PARENTRAG_RESTART_MIB")
	if v == "" {
		return 1024, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("PARENTRAG_RESTART_MIB=%q: want a number of MiB", v)
	}
	return n, nil
}

// buildBinary builds cmd/parentrag into dir.
func buildBinary(root, dir string) (string, error) {
	bin := filepath.Join(dir, "parentrag")
	build := exec.Command("go", "build", "-o", bin, "./cmd/parentrag")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// shardBytes is the size of one revision shard.
const shardBytes = 900 << 10

// createObjects creates the revision shards (namespace archive) and the
// unrelated ConfigMaps and Secrets (namespace noise), 16 at a time.
func createObjects(c client.Client, mib int) error {
	ctx := context.Background()
	for _, ns := range []string{"archive", "noise"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	shard := make([]byte, shardBytes)
	for i := range shard {
		shard[i] = byte(i * 7)
	}
	small := []byte(strings.Repeat("x", 1024))
	shards := mib << 20 / shardBytes
	var objs []client.Object
	for i := range shards {
		objs = append(objs, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "archive", Name: fmt.Sprintf("archive-%d-%04d", i%50, i), Labels: map[string]string{
				cmbundle.LabelCorpus: fmt.Sprintf("archive-%d", i%50), cmbundle.LabelRevision: fmt.Sprintf("rev%03d", i%200),
				cmbundle.LabelRole: cmbundle.RoleShard, controllers.LabelManagedBy: controllers.ManagedByValue,
			}},
			BinaryData: map[string][]byte{"parents": shard},
		})
	}
	for i := range 10_000 {
		objs = append(objs,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "noise", Name: fmt.Sprintf("cm-%05d", i)}, BinaryData: map[string][]byte{"data": small}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "noise", Name: fmt.Sprintf("secret-%05d", i)}, Data: map[string][]byte{"data": small}})
	}
	work := make(chan client.Object)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 16 {
		wg.Go(func() {
			for o := range work {
				if err := c.Create(ctx, o); err != nil {
					mu.Lock()
					firstErr = cmpOr(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	return firstErr
}

// cmpOr returns a unless it is nil, else b.
func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// serveSamples applies config/samples in namespace live and runs the
// operator until its Corpus is Ready, then stops it.
func serveSamples(b *testing.B, env *devcluster.Env, bin, kubeconfig string) client.ObjectKey {
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "live"}}); err != nil {
		b.Fatal(err)
	}
	files, err := env.SampleFiles()
	if err != nil {
		b.Fatal(err)
	}
	objs, err := env.Apply(ctx, "live", files...)
	if err != nil {
		b.Fatal(err)
	}
	var key client.ObjectKey
	for _, o := range objs {
		if o.GetKind() == "Corpus" {
			key = client.ObjectKey{Namespace: "live", Name: o.GetName()}
		}
	}
	op := startOperator(b, bin, kubeconfig)
	defer op.stop(b)
	waitFor(b, 5*time.Minute, "the samples' Corpus to be Ready", func() bool {
		var c v1alpha1.Corpus
		return env.Client.Get(ctx, key, &c) == nil && apimeta.IsStatusConditionTrue(c.Status.Conditions, "Ready")
	})
	return key
}

// restart is what one restart measured.
type restart struct {
	firstReconcile   time.Duration
	idleRSS, peakRSS float64
}

// restartOnce asks the Corpus for a reconcile, starts the operator and
// measures it.
func restartOnce(b *testing.B, c client.Client, bin, kubeconfig string, key client.ObjectKey, token string) restart {
	ctx := context.Background()
	var corpus v1alpha1.Corpus
	if err := c.Get(ctx, key, &corpus); err != nil {
		b.Fatal(err)
	}
	patch := client.MergeFrom(corpus.DeepCopy())
	metav1.SetMetaDataAnnotation(&corpus.ObjectMeta, "reconcile.fluxcd.io/requestedAt", token)
	if err := c.Patch(ctx, &corpus, patch); err != nil {
		b.Fatal(err)
	}
	op := startOperator(b, bin, kubeconfig)
	defer op.stop(b)
	waitFor(b, 2*time.Minute, "the Corpus to echo "+token, func() bool {
		return c.Get(ctx, key, &corpus) == nil && corpus.Status.LastHandledReconcileAt == token
	})
	r := restart{firstReconcile: time.Since(op.started)}
	time.Sleep(10 * time.Second)
	r.idleRSS = procStatusMiB(b, op.cmd.Process.Pid, "VmRSS")
	r.peakRSS = procStatusMiB(b, op.cmd.Process.Pid, "VmHWM")
	return r
}

// operator is a running manager process.
type operator struct {
	cmd     *exec.Cmd
	started time.Time
	log     *os.File
}

// startOperator starts `parentrag manager` with kubeconfig, its log in a
// temporary file.
func startOperator(b *testing.B, bin, kubeconfig string) *operator {
	log, err := os.CreateTemp(b.TempDir(), "manager-*.log")
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "manager", "--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--image", "parentrag:bench")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = log, log
	op := &operator{cmd: cmd, started: time.Now(), log: log}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return op
}

// stop sends SIGTERM and waits for the process to exit.
func (o *operator) stop(b *testing.B) {
	o.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- o.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		o.cmd.Process.Kill()
		<-done
		b.Errorf("the operator did not stop within 30s of SIGTERM")
	}
	o.log.Close()
}

// procStatusMiB reads a kB field of /proc/<pid>/status in MiB.
func procStatusMiB(b *testing.B, pid int, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// waitFor polls cond every 20ms until it holds, failing after timeout.
func waitFor(b *testing.B, timeout time.Duration, what string, cond func() bool) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	b.Fatalf("timed out after %s waiting for %s", timeout, what)
}
