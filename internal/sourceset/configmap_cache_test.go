package sourceset

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/kubetest"
)

// countingServer returns a fake API server holding objs that counts its
// reads into n.
func countingServer(t *testing.T, n *kubetest.Reads, objs ...client.Object) client.WithWatch {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return kubetest.CountingClient(scheme, n, objs...)
}

// noteConfigMap is a ConfigMap of namespace ns labelled corpus=notes that
// holds one note per key.
func noteConfigMap(name string, notes ...string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"corpus": "notes"}}, Data: map[string]string{}}
	for i, n := range notes {
		cm.Data[fmt.Sprintf("n%d.md", i)] = n
	}
	return cm
}

// editBeta changes the first note of ConfigMap b to "Beta, edited.".
func editBeta(t *testing.T, c client.Client) {
	t.Helper()
	b := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "b"}, b); err != nil {
		t.Fatal(err)
	}
	b.Data["n0.md"] = "Beta, edited."
	if err := c.Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// TestConfigMapCacheReadsOnlyWhatChanged reads a selector source and a
// named one again and again: unchanged ConfigMaps are not sent whole
// again, a change or a new ConfigMap is read, and the documents are always
// those a Reader without a cache reads.
func TestConfigMapCacheReadsOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	var n kubetest.Reads
	handbook := noteConfigMap("handbook", "# Handbook\n\nRead me.")
	handbook.Labels = nil
	api := countingServer(t, &n, noteConfigMap("a", "Alpha one.", "Alpha two."), noteConfigMap("b", "Beta."), handbook)
	sources := []v1alpha1.Source{
		{Name: "notes", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"corpus": "notes"}}},
		{Name: "handbook", ConfigMap: &v1alpha1.ConfigMapSource{Name: "handbook"}},
	}
	cache := &ConfigMapCache{}
	read := func(step string, wantWhole int) {
		t.Helper()
		n = kubetest.Reads{}
		got, err := (&Reader{Client: api, Namespace: "ns", ConfigMaps: cache}).Read(ctx, sources)
		if err != nil {
			t.Fatal(err)
		}
		if n.Whole != wantWhole {
			t.Errorf("%s: %d ConfigMaps sent whole, want %d", step, n.Whole, wantWhole)
		}
		want, err := (&Reader{Client: api, Namespace: "ns"}).Read(ctx, sources)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Docs, want.Docs) || got.Digest() != want.Digest() || fmt.Sprint(got.Read) != fmt.Sprint(want.Read) {
			t.Fatalf("%s: read %v, without the cache %v", step, got.Docs, want.Docs)
		}
	}
	read("first read", 3)
	read("unchanged", 0)

	editBeta(t, api)
	read("one edited", 2) // the selector's two again; handbook is unchanged
	if err := api.Create(ctx, noteConfigMap("c", "Gamma.")); err != nil {
		t.Fatal(err)
	}
	read("one added", 3)
	read("unchanged again", 0)
	if err := api.Delete(ctx, noteConfigMap("a")); err != nil {
		t.Fatal(err)
	}
	read("one deleted", 0)
}

// TestConfigMapCacheForgetsPastItsBound checks that the cache's data stays
// within MaxConfigMapCacheBytes, and that a ConfigMap stored again under
// its name replaces what was kept.
func TestConfigMapCacheForgetsPastItsBound(t *testing.T) {
	var c ConfigMapCache
	big := strings.Repeat("x", MaxConfigMapCacheBytes/3)
	for i := range 5 {
		cm := noteConfigMap(fmt.Sprintf("cm-%d", i), big)
		cm.UID, cm.ResourceVersion = "uid", "1"
		c.remember(cm)
		if c.bytes > MaxConfigMapCacheBytes || c.bytes != len(c.objs)*dataBytes(cm) {
			t.Fatalf("after %d ConfigMaps: %d bytes kept in %d", i+1, c.bytes, len(c.objs))
		}
	}
	again := noteConfigMap("cm-4", "small")
	again.UID, again.ResourceVersion = "uid", "2"
	c.remember(again)
	meta := &metav1.PartialObjectMetadata{ObjectMeta: again.ObjectMeta}
	if got, ok := c.cached(meta); !ok || got != again {
		t.Fatalf("the ConfigMap stored again is not the one kept")
	}
	meta.ResourceVersion = "1"
	if _, ok := c.cached(meta); ok {
		t.Fatalf("an earlier version of a ConfigMap was taken for the kept one")
	}
}

// TestConfigMapCacheAsksTheInformerForMetadata checks that with an
// informer for metadata, a read of unchanged sources sends no request at
// all, and that a change the informer has seen is read whole.
func TestConfigMapCacheAsksTheInformerForMetadata(t *testing.T) {
	ctx := context.Background()
	var n kubetest.Reads
	objs := func() []client.Object {
		return []client.Object{noteConfigMap("a", "Alpha."), noteConfigMap("b", "Beta.")}
	}
	api := countingServer(t, &n, objs()...)
	var informerReads kubetest.Reads
	informer := countingServer(t, &informerReads, objs()...)
	sources := []v1alpha1.Source{{Name: "notes", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"corpus": "notes"}}}}
	reader := &Reader{Client: api, Namespace: "ns", ConfigMaps: &ConfigMapCache{}, Metadata: informer}
	read := func(step string, want kubetest.Reads, wantText string) {
		t.Helper()
		n = kubetest.Reads{}
		set, err := reader.Read(ctx, sources)
		if err != nil {
			t.Fatal(err)
		}
		if n != want || len(set.Docs) != 2 || set.Docs[1].Text != wantText {
			t.Fatalf("%s: the API server sent %d ConfigMaps whole and answered %d metadata requests (want %+v); read %v", step, n.Whole, n.Metadata, want, set.Docs)
		}
	}
	read("first read", kubetest.Reads{Whole: 2}, "Beta.")
	read("unchanged", kubetest.Reads{}, "Beta.")
	for _, c := range []client.Client{api, informer} {
		editBeta(t, c)
	}
	read("edited", kubetest.Reads{Whole: 2}, "Beta, edited.")
}
