package sourceset

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/kubetest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// TestReaderKeepsTheSetOfUnchangedSources reads the same sources again
// and again through one cache: while neither their spec nor any of their
// ConfigMaps changes, the Reader returns the set it read before; a change
// to either gives a new set, the same as a Reader without a cache reads.
func TestReaderKeepsTheSetOfUnchangedSources(t *testing.T) {
	ctx := context.Background()
	var n kubetest.Reads
	api := countingServer(t, &n, noteConfigMap("a", "Alpha one.", "Alpha two."), noteConfigMap("b", "Beta."))
	sources := []v1alpha1.Source{
		{Name: "notes", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"corpus": "notes"}}},
		{Name: "handbook", ConfigMap: &v1alpha1.ConfigMapSource{Name: "handbook"}},
		{Name: "inline", Inline: []v1alpha1.InlineDocument{{ID: "faq", Text: "Ask away."}}},
	}
	reader := &Reader{Client: api, Namespace: "ns", ConfigMaps: &ConfigMapCache{}}
	var last *Set
	read := func(step string, wantKept bool) {
		t.Helper()
		got, err := reader.Read(ctx, sources)
		if err != nil {
			t.Fatal(err)
		}
		if kept := got == last; kept != wantKept {
			t.Fatalf("%s: the set read before was returned: %v, want %v", step, kept, wantKept)
		}
		want, err := (&Reader{Client: api, Namespace: "ns"}).Read(ctx, sources)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Docs, want.Docs) || !reflect.DeepEqual(got.Errors, want.Errors) ||
			!reflect.DeepEqual(got.Read, want.Read) || got.Digest() != want.Digest() {
			t.Fatalf("%s: read %v (errors %v), without the cache %v (errors %v)", step, got.Docs, got.Errors, want.Docs, want.Errors)
		}
		last = got
	}
	read("first read, handbook missing", false)
	read("unchanged", true)

	if err := api.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "handbook"}, Data: map[string]string{"intro.md": "# Intro\n\nHello."}}); err != nil {
		t.Fatal(err)
	}
	read("handbook created", false)
	read("unchanged again", true)

	editBeta(t, api)
	read("a ConfigMap edited", false)

	sources[2].Inline[0].Text = "Ask anything."
	read("the inline document edited", false)
	sources[0].Selector.MatchLabels["corpus"] = "none"
	read("the selector changed", false)
	read("unchanged at last", true)

	n = kubetest.Reads{}
	reader.Read(ctx, sources)
	if n.Whole != 0 {
		t.Fatalf("a read of unchanged sources sent %d ConfigMaps whole", n.Whole)
	}
}

// TestReaderReadsURLSourcesEachTime checks that a set with a URL source
// is not kept: its documents come from the Fetchers, which decide when to
// download them again.
func TestReaderReadsURLSourcesEachTime(t *testing.T) {
	text := "# Remote\n\nFirst words."
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, text) }))
	defer srv.Close()
	sources := []v1alpha1.Source{
		{Name: "inline", Inline: []v1alpha1.InlineDocument{{ID: "faq", Text: "Ask away."}}},
		{Name: "remote", URL: &v1alpha1.URLSource{URL: srv.URL + "/remote.md"}},
	}
	reader := &Reader{Namespace: "ns", ConfigMaps: &ConfigMapCache{}}
	first, err := reader.Read(context.Background(), sources)
	if err != nil {
		t.Fatal(err)
	}
	text = "# Remote\n\nOther words."
	second, err := reader.Read(context.Background(), sources)
	if err != nil {
		t.Fatal(err)
	}
	if first == second || first.Digest() == second.Digest() || len(second.Docs) != 2 || second.Docs[1].Text != text {
		t.Fatalf("a URL source's new content was not read: %v, then %v", first.Docs, second.Docs)
	}
}

// TestKeptSetsStayWithinTheirBounds checks that the sets a cache keeps
// stay within maxKeptSets and maxKeptDocuments, that a set larger than
// the bound is not kept, and that keeping a ConfigMap anew forgets them.
func TestKeptSetsStayWithinTheirBounds(t *testing.T) {
	var c ConfigMapCache
	setOf := func(docs int) *Set { return &Set{Docs: make([]hierarchy.Document, docs)} }
	for i := range 2 * maxKeptSets {
		c.keepSet(setKey{byte(i), byte(i >> 8)}, setOf(1))
		if len(c.sets) > maxKeptSets || c.setDocs != len(c.sets) {
			t.Fatalf("after %d sets: %d kept, of %d documents", i+1, len(c.sets), c.setDocs)
		}
	}
	for i := range 5 {
		c.keepSet(setKey{0xff, byte(i)}, setOf(maxKeptDocuments/3))
		if c.setDocs > maxKeptDocuments {
			t.Fatalf("after %d large sets: %d documents kept", i+1, c.setDocs)
		}
	}
	c.keepSet(setKey{0xfe}, setOf(maxKeptDocuments+1))
	if _, ok := c.keptSet(setKey{0xfe}); ok {
		t.Fatal("a set of more than maxKeptDocuments documents was kept")
	}
	kept := setKey{0xfd}
	c.keepSet(kept, setOf(1))
	if _, ok := c.keptSet(kept); !ok {
		t.Fatal("a set just kept is not found")
	}
	cm := noteConfigMap("a", "Alpha.")
	cm.UID, cm.ResourceVersion = "uid", "1"
	c.remember(cm)
	if _, ok := c.keptSet(kept); ok || c.setDocs != 0 {
		t.Fatalf("keeping a ConfigMap anew left the kept sets (%d documents)", c.setDocs)
	}
}
