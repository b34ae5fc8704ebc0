package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/kubetest"
)

// manifestOf returns a manifest ConfigMap of the Corpus docs for revision
// rev, with the given UID and shards.
func manifestOf(rev string, uid types.UID, shards ...string) *corev1.ConfigMap {
	cm := storedConfigMap("docs-"+rev[:8], cmbundle.RoleManifest)
	cm.UID = uid
	quoted := make([]string, len(shards))
	for i, s := range shards {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	cm.Data = map[string]string{
		cmbundle.ManifestKey: fmt.Sprintf(`{"revision":%q,"documents":%d}`, rev, len(shards)),
		cmbundle.FilesKey:    fmt.Sprintf(`{"shards":[%s],"files":[]}`, strings.Join(quoted, ",")),
	}
	return cm
}

// TestRevisionManifestsReadsAManifestWholeOncePerUID checks that a
// manifest read before costs no request where the informer lists it and
// one metadata read where it does not, that one made again under the same
// name (a new UID) is read anew, and that what a caller changes is its own.
func TestRevisionManifestsReadsAManifestWholeOncePerUID(t *testing.T) {
	ctx := context.Background()
	first := manifestOf("aaaaaaaa11111111", "uid-1", "docs-shard-a")
	key := client.ObjectKeyFromObject(first)
	var n kubetest.Reads
	api := kubetest.CountingClient(NewScheme(), &n, first)
	informer := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(first).Build()
	var m revisionManifests

	read := func(informer client.Reader, want kubetest.Reads) storedRevision {
		t.Helper()
		n = kubetest.Reads{}
		got, err := m.get(ctx, informer, api, key)
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("the API server was asked for %d whole ConfigMaps and %d metadata, want %+v", n.Whole, n.Metadata, want)
		}
		return got
	}
	got := read(informer, kubetest.Reads{Whole: 1})
	if got.status.Name != "aaaaaaaa11111111" || got.status.Documents != 1 || !slices.Equal(got.names, []string{"docs-shard-a", key.Name}) {
		t.Fatalf("read %+v, names %q", got.status, got.names)
	}
	got.status.Documents, got.names[0] = 99, "changed"
	again := read(informer, kubetest.Reads{})
	if again.status.Documents != 1 || again.names[0] != "docs-shard-a" {
		t.Fatalf("a caller's change reached what is remembered: %+v, %q", again.status, again.names)
	}
	read(nil, kubetest.Reads{Metadata: 1})

	// Deleted and stored again under the same name: a new UID.
	second := manifestOf("aaaaaaaa22222222", "uid-2", "docs-shard-b", "docs-shard-c")
	second.Name = first.Name
	for _, c := range []client.Client{api, informer} {
		if err := c.Delete(ctx, first.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, second.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(informer, kubetest.Reads{Whole: 1}); got.status.Name != "aaaaaaaa22222222" || len(got.names) != 3 {
		t.Fatalf("after the manifest was made again, read %+v, names %q", got.status, got.names)
	}

	// Gone from the informer and the API server: NotFound.
	for _, c := range []client.Client{api, informer} {
		if err := c.Delete(ctx, second.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.get(ctx, informer, api, key); !apierrors.IsNotFound(err) {
		t.Fatalf("a deleted manifest gave %v, want NotFound", err)
	}
}

// TestRevisionManifestsListReadsOnlyNewManifestsWhole checks that listing
// a Corpus's manifests asks the API server for their metadata each time
// and reads whole only those not read before.
func TestRevisionManifestsListReadsOnlyNewManifestsWhole(t *testing.T) {
	ctx := context.Background()
	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "docs"}}
	a := manifestOf("aaaaaaaa11111111", "uid-a", "docs-shard-a")
	b := manifestOf("bbbbbbbb22222222", "uid-b", "docs-shard-b")
	var n kubetest.Reads
	api := kubetest.CountingClient(NewScheme(), &n, a, b, storedConfigMap("docs-shard-a", cmbundle.RoleShard))
	var m revisionManifests

	names := func(want kubetest.Reads) []string {
		t.Helper()
		n = kubetest.Reads{}
		stored, err := m.list(ctx, api, c)
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("the API server was asked for %d whole ConfigMaps and %d metadata, want %+v", n.Whole, n.Metadata, want)
		}
		var all []string
		for _, s := range stored {
			all = append(all, s.names...)
		}
		return sortedNames(all...)
	}
	if got := names(kubetest.Reads{Whole: 2, Metadata: 1}); !slices.Equal(got, sortedNames(a.Name, "docs-shard-a", b.Name, "docs-shard-b")) {
		t.Fatalf("named %q", got)
	}
	third := manifestOf("cccccccc33333333", "uid-c", "docs-shard-c")
	if err := api.Create(ctx, third); err != nil {
		t.Fatal(err)
	}
	if err := api.Delete(ctx, b.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if got := names(kubetest.Reads{Whole: 1, Metadata: 1}); !slices.Equal(got, sortedNames(a.Name, "docs-shard-a", third.Name, "docs-shard-c")) {
		t.Fatalf("after one manifest was added and one deleted, named %q", got)
	}
}

// sortedNames returns names sorted.
func sortedNames(names ...string) []string { return slices.Sorted(slices.Values(names)) }
