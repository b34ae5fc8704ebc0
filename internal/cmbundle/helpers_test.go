package cmbundle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// corpus is a few documents on distinct topics.
func corpus() []hierarchy.Document {
	return []hierarchy.Document{
		{ID: "rollout.md", Title: "Rollout", Text: "# Rollout\n\n" +
			"A new index revision is built beside the serving one. Query pods keep reading the old revision.\n\n" +
			"Verification compares row counts with the manifest and resolves sample children to parents."},
		{ID: "garden.md", Title: "Garden", Text: "# Garden\n\n" +
			"Tomatoes need full sun, deep watering and a stake to climb. Basil grows well beside tomatoes.\n\n" +
			"Compost improves the soil; mulch keeps moisture in during the dry summer weeks."},
		{ID: "sailing.txt", Text: "Sailing upwind means tacking: the boat zigzags across the wind. " +
			"A reef in the mainsail reduces heeling in strong gusts. The harbor master assigns moorings.",
			Metadata: map[string]string{"lang": "en"}},
		{ID: "unicode.md", Title: "Größe", Text: "Die Größe der Straße 🎉 ist beträchtlich. Café crème coûte cher."},
	}
}

var queries = []string{
	"how is a new revision verified before promotion",
	"tomatoes and basil in full sun",
	"reef the mainsail in strong gusts",
	"Größe der Straße",
	"nothing matches xylophone",
}

// saveBundle indexes docs and saves them as a bundle of revision rev,
// returning its directory.
func saveBundle(t testing.TB, docs []hierarchy.Document, rev string) string {
	return bundletest.Save(t, docs, rev)
}

// Pack returns every ConfigMap a Packer of dir hands out, in order.
func Pack(dir, namespace, name string, labels map[string]string, opts ...PackOption) ([]corev1.ConfigMap, error) {
	p, err := NewPacker(dir, namespace, name, labels, opts...)
	if err != nil {
		return nil, err
	}
	out := make([]corev1.ConfigMap, 0, p.Count())
	err = p.Each(func(cm *corev1.ConfigMap) error {
		out = append(out, *cm)
		return nil
	})
	return out, err
}

// pack packs dir as corpus "docs" in namespace "ns" under name, failing the
// test on an error.
func pack(t testing.TB, dir, name string) []corev1.ConfigMap {
	t.Helper()
	cms, err := Pack(dir, "ns", name, map[string]string{LabelCorpus: "docs"})
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	return cms
}

// reader is a fake client holding cms: Unpack only reads.
func reader(cms []corev1.ConfigMap) client.Reader {
	objs := make([]client.Object, len(cms))
	for i := range cms {
		objs[i] = cms[i].DeepCopy()
	}
	return fake.NewClientBuilder().WithObjects(objs...).Build()
}

// openBundle opens the bundle in dir, closing it when the test ends.
func openBundle(t testing.TB, dir string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// shardIndex returns the index in cms of the ConfigMap named name.
func shardIndex(t testing.TB, cms []corev1.ConfigMap, name string) int {
	t.Helper()
	for i := range cms {
		if cms[i].Name == name {
			return i
		}
	}
	t.Fatalf("no configmap %s", name)
	return -1
}
