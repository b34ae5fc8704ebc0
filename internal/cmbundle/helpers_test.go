package cmbundle

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/split"
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

// saveBundle indexes docs with the lexical embedder and saves the bundle
// under a new temporary directory, whose path it returns.
func saveBundle(t testing.TB, docs []hierarchy.Document, rev string) string {
	t.Helper()
	parent, err := split.NewRecursive(split.DefaultOptions(200, 0))
	if err != nil {
		t.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(60, 10))
	if err != nil {
		t.Fatal(err)
	}
	b := &hierarchy.Builder{Strategy: hierarchy.ParentChild, Revision: "policy-rev", Parent: parent, Child: child}
	lex, err := embed.NewLexical(embed.DefaultK1, embed.DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := indexer.Build(context.Background(), docs, b, lex, indexer.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	m := bundle.Manifest{
		Revision:       rev,
		PolicyRevision: "policy-rev",
		Policy:         json.RawMessage(`{"strategy":"ParentChild"}`),
		LengthUnit:     "Characters",
		SourceDigest:   bundle.SourceDigest(docs),
		Embedder:       bundle.Embedder{Kind: bundle.EmbedderLexical, K1: embed.DefaultK1, B: embed.DefaultB},
		CreatedAt:      time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	if _, err := bundle.Save(dir, ix, m, false); err != nil {
		t.Fatalf("Save: %v", err)
	}
	return dir
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
