package controllers_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/index/postgres/pgtest"
)

// env is the control plane shared by the suite, with the operator running.
var env *devcluster.Env

// k8s is a client of the control plane.
var k8s client.Client

// suiteRemoteMemory is the operator's --remote-memory in the suite: small,
// so that a test fills it with sources of a few MiB.
const suiteRemoteMemory = 16 << 20

// TestMain starts kube-apiserver and etcd once, installs the CRDs, and runs
// the real controllers against them for every test, under the shipped
// RBAC. The tests that spend most of their time waiting (on a deadline, a
// backoff, a grace period) and touch only what they create call t.Parallel,
// so that their waits overlap once the others have run.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if env, err = devcluster.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	defer pgtest.Stop()
	k8s = env.Client
	controllers.UseSuiteClient(k8s)
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	// The operator acts as its own ServiceAccount under the RBAC that
	// config/default ships, as it does in a cluster.
	managerConfig, err := env.ManagerConfig(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := ctrl.NewManager(managerConfig, ctrl.Options{Scheme: controllers.NewScheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: controllers.CacheOptions(), Client: controllers.ClientOptions()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cacheDir, err := os.MkdirTemp("", "parentrag-test-cache-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(cacheDir)
	if err := controllers.Setup(mgr, controllers.Options{Image: "parentrag:test", EmbeddingCacheDir: cacheDir, RemoteMemory: suiteRemoteMemory, SecretGoneGrace: suiteSecretGoneGrace}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return m.Run()
}

// eventually polls cond every 100ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
}

// kstatusOf computes an object's kstatus from what the API server holds.
func kstatusOf(t *testing.T, obj client.Object) *status.Result {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	return kstatusIn(t, k8s, obj)
}

// waitCurrent waits until the controller has observed the object's
// generation and its kstatus is Current, as kubectl wait and Flux would.
// (kstatus alone calls an object without status Current.)
func waitCurrent(t *testing.T, obj client.Object, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("%T %s to be Current", obj, obj.GetName()), func() (bool, error) {
		res := kstatusOf(t, obj)
		observed, _ := observedGeneration(obj)
		if observed < obj.GetGeneration() {
			return false, fmt.Errorf("observedGeneration %d < generation %d", observed, obj.GetGeneration())
		}
		return res.Status == status.CurrentStatus, fmt.Errorf("%s: %s", res.Status, res.Message)
	})
}

// observedGeneration reads status.observedGeneration of any object.
func observedGeneration(obj client.Object) (int64, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return 0, err
	}
	g, _, err := unstructured.NestedInt64(raw, "status", "observedGeneration")
	return g, err
}

// zapLevel is quiet unless PARENTRAG_TEST_LOG is set.
func zapLevel() zapcore.Level {
	if os.Getenv("PARENTRAG_TEST_LOG") != "" {
		return -1
	}
	return 2
}
