package controllers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/kubemeta"
)

// TestCacheLeavesUnrelatedConfigMaps fills a namespace with ConfigMaps
// the operator neither owns nor reads (200 of 100 KB; set
// PARENTRAG_CACHE_CONFIGMAPS for more) and starts two managers on it: one
// that informs every ConfigMap, as the operator did, and the operator's
// own. The operator's reads a small part of the bytes from the API server
// and holds a small part of the heap, and reports how long it took to
// sync the watch its first reconcile waits for.
func TestCacheLeavesUnrelatedConfigMaps(t *testing.T) {
	n := 200
	if v := os.Getenv("PARENTRAG_CACHE_CONFIGMAPS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatalf("PARENTRAG_CACHE_CONFIGMAPS=%q: %v", v, err)
		}
	}
	const size = 100 << 10
	ns := newNamespace(t)
	fillConfigMaps(t, ns, n, size)
	total := int64(n) * size

	before := measureManager(t, ns, false)
	after := measureManager(t, ns, true)
	for _, m := range []struct {
		name string
		managerFigures
	}{{"every ConfigMap cached", before}, {"operator", after}} {
		t.Logf("%s: %d ConfigMaps of %d KiB (%d MiB): read %.1f KiB of ConfigMaps from the API server, heap +%.1f MiB, ConfigMap watch synced %s after start",
			m.name, n, size>>10, total>>20, float64(m.bytes)/(1<<10), float64(m.heap)/(1<<20), m.sync.Round(time.Millisecond))
	}
	if before.bytes < total {
		t.Fatalf("the baseline read %d bytes of ConfigMaps, less than the %d in the namespace: the measure is broken", before.bytes, total)
	}
	if after.bytes > total/20 {
		t.Errorf("the operator read %d bytes of ConfigMaps at start, want under %d (1/20 of what the namespace holds)", after.bytes, total/20)
	}
	if after.heap > total/4 {
		t.Errorf("the operator's heap grew by %d bytes at start, want under %d (1/4 of the ConfigMaps' data)", after.heap, total/4)
	}
}

// managerFigures are what starting one manager cost.
type managerFigures struct {
	bytes int64
	heap  int64
	sync  time.Duration
}

// fillConfigMaps creates n ConfigMaps of size bytes in ns.
func fillConfigMaps(t *testing.T, ns string, n, size int) {
	t.Helper()
	data := strings.Repeat("x", size)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := atomic.Int64{}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("unrelated-%05d", i)}, Data: map[string]string{"blob": data}}
				if err := k8s.Create(context.Background(), cm); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k8s.DeleteAllOf(context.Background(), &corev1.ConfigMap{}, client.InNamespace(ns))
	})
}

// measureManager starts a manager on ns and waits until its ConfigMap
// watch has synced. The operator's (operator true) runs the controllers
// as the shipped ServiceAccount with the operator's cache options; the
// baseline informs every ConfigMap and Secret in full, as the operator
// did before.
func measureManager(t *testing.T, ns string, operator bool) managerFigures {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := rest.CopyConfig(env.Config)
	opts := ctrl.Options{
		Scheme: controllers.NewScheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		// The suite's manager runs controllers of the same names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	opts.Cache.DefaultNamespaces = controllers.CacheOptions(ns).DefaultNamespaces
	if operator {
		var err error
		if cfg, err = env.ManagerConfig(ctx); err != nil {
			t.Fatal(err)
		}
		opts.Cache, opts.Client = controllers.CacheOptions(ns), controllers.ClientOptions()
	}
	var read atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &read} })
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	var watched client.Object = &corev1.ConfigMap{}
	if operator {
		if err := controllers.Setup(mgr, controllers.Options{Image: "parentrag:test", EmbeddingCacheDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		watched = kubemeta.ConfigMap()
	} else if _, err := mgr.GetCache().GetInformer(ctx, &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	heapBefore := heapInUse()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	// GetInformer returns once the informer has synced; the Corpus
	// controller's first reconcile waits for the same one.
	if _, err := mgr.GetCache().GetInformer(ctx, watched); err != nil {
		t.Fatal(err)
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	f := managerFigures{sync: time.Since(start), bytes: read.Load(), heap: int64(heapInUse()) - int64(heapBefore)}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return f
}

// heapInUse is the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// countingTransport counts the bytes of the API server's answers about
// ConfigMaps.
type countingTransport struct {
	http.RoundTripper
	read *atomic.Int64
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.RoundTripper.RoundTrip(req)
	if err != nil || !strings.Contains(req.URL.Path, "/configmaps") {
		return res, err
	}
	res.Body = countingBody{res.Body, c.read}
	return res, nil
}

// countingBody counts what is read from a response body.
type countingBody struct {
	io.ReadCloser
	read *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read.Add(int64(n))
	return n, err
}
