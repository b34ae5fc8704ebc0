package controllers_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/kubemeta"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
	"github.com/parentrag/parentrag/internal/sourceset"
)

// BenchmarkReadConfigMapSources reads a selector source of 20 ConfigMaps
// holding 1,500 synthetic notes each (12 MB as the API server sends them)
// from the envtest API server and hashes them into the digest that names
// the revision, as a Corpus reconcile of unchanged sources does: whole
// every time, and kept in a sourceset.ConfigMapCache with their metadata
// read from the API server, or from an informer of ConfigMap metadata as
// the operator's. It reports the bytes the API server sent per read.
func BenchmarkReadConfigMapSources(b *testing.B) {
	ctx := context.Background()
	ns := newNamespace(b)
	words := synthtest.New(7, 20000)
	for i := range 20 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("notes-%02d", i), Labels: map[string]string{"corpus": "notes"}}, Data: map[string]string{}}
		for j := range 1500 {
			cm.Data[fmt.Sprintf("note-%04d.txt", j)] = words.Paragraph()
		}
		if err := k8s.Create(ctx, cm); err != nil {
			b.Fatal(err)
		}
	}
	var received atomic.Int64
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &received} })
	c, err := client.New(cfg, client.Options{Scheme: controllers.NewScheme()})
	if err != nil {
		b.Fatal(err)
	}
	informer := metadataInformer(b, ns)
	sources := []v1alpha1.Source{{Name: "notes", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"corpus": "notes"}}}}
	for _, tc := range []struct {
		name     string
		cache    *sourceset.ConfigMapCache
		metadata client.Reader
	}{
		{"whole", nil, nil},
		{"kept, metadata from the API server", &sourceset.ConfigMapCache{}, nil},
		{"kept, metadata from an informer", &sourceset.ConfigMapCache{}, informer},
	} {
		b.Run(tc.name, func(b *testing.B) {
			reader := &sourceset.Reader{Client: c, Namespace: ns, ConfigMaps: tc.cache, Metadata: tc.metadata}
			if _, err := reader.Read(ctx, sources); err != nil { // fills the cache
				b.Fatal(err)
			}
			received.Store(0)
			docs := 0
			for b.Loop() {
				set, err := reader.Read(ctx, sources)
				if err != nil {
					b.Fatal(err)
				}
				set.Digest()
				docs = len(set.Docs)
			}
			if docs != 20*1500 {
				b.Fatalf("read %d documents, want %d", docs, 20*1500)
			}
			b.ReportMetric(float64(received.Load())/float64(b.N)/1e6, "MB-received/op")
		})
	}
}

// metadataInformer starts an informer of the ConfigMaps' metadata in ns,
// with the operator's cache options, and returns it once it has synced.
func metadataInformer(b *testing.B, ns string) client.Reader {
	c, err := cache.New(env.Config, controllers.CacheOptions(ns))
	if err != nil {
		b.Fatal(err)
	}
	meta := kubemeta.ConfigMap()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	if _, err := c.GetInformer(ctx, meta); err != nil {
		b.Fatal(err)
	}
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the informer did not sync")
	}
	return c
}
