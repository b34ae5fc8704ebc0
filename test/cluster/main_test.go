//go:build cluster

// Package cluster_test runs parentrag the way its users do, on a real
// cluster: the operator's own image deployed in-cluster by an overlay of
// config/default as a user writes one (images:), as its ServiceAccount under the shipped RBAC, with real
// pods, Jobs, claims and Services. It runs on the one-node cluster of make
// cluster-up (make test-cluster) and on kind (hack/kind-e2e.sh).
//
// It takes:
//
//	KUBECONFIG             the cluster (required)
//	PARENTRAG_TEST_IMAGE   the operator's image (default parentrag:cluster;
//	                       make test-cluster names a registry-style one)
//	PARENTRAG_LOAD_IMAGE   a command run with the image as its last
//	                       argument that makes it available on the nodes
//	                       (hack/cluster/load-image.sh, kind load docker-image ...)
//	PARENTRAG_SERVICE_ACCESS  clusterip (default: Services are reached at
//	                       their ClusterIP, which kube-proxy routes on the
//	                       node the test runs on) or proxy (through the API
//	                       server's service proxy, as on kind)
//	KUBECTL                kubectl to run (default: kubectl on PATH)
package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/repo"
)

// The cluster under test, set up once by TestMain.
var (
	cfg       *rest.Config
	k8s       client.WithWatch
	clientset *kubernetes.Clientset
	root      string
	image     string
)

// TestMain loads the image, deploys the operator and runs the tests.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := setUp(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster suite:", err)
		return 1
	}
	code := m.Run()
	// What the tests deleted must have been released by its finalizers.
	if err := checkReleased(context.Background(), 3*time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, "cluster suite:", err)
		return 1
	}
	return code
}

// setUp connects to the cluster, makes the image available and deploys
// the operator from a user's overlay of config/default.
func setUp() error {
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		return fmt.Errorf("KUBECONFIG is not set: start a cluster (make cluster-up prints the export line; or kind) and export KUBECONFIG")
	}
	var err error
	if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		return fmt.Errorf("reading KUBECONFIG %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	scheme := controllers.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	if k8s, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if root, err = repo.Root(); err != nil {
		return err
	}
	image = envOr("PARENTRAG_TEST_IMAGE", "parentrag:cluster")
	if err := loadImage(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return deployOperator(ctx)
}

// loadImage runs $PARENTRAG_LOAD_IMAGE with the image as its last
// argument.
func loadImage() error {
	load := os.Getenv("PARENTRAG_LOAD_IMAGE")
	if load == "" {
		return nil
	}
	start := time.Now()
	cmd := exec.Command("sh", "-c", load+` "$0"`, image)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("loading image %s with %q: %w\n%s", image, load, err, out)
	}
	fmt.Fprintf(os.Stderr, "cluster suite: image %s loaded in %.1fs\n", image, time.Since(start).Seconds())
	return nil
}

// envOr returns $name, or def when it is empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// kubectl runs kubectl with args and returns what it printed, failing the
// test when it fails.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	bin := envOr("KUBECTL", "kubectl")
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}
