package config_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/document"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/rollout"
)

// checkVariant renders a variant of the samples and checks each object
// against its CRD, without a namespace; it returns the variant's Corpus.
func checkVariant(t *testing.T, dir string) (manifests, *v1alpha1.Corpus) {
	t.Helper()
	samples := render(t, dir)
	crds := crdsByKind(t, render(t, "config/default"))
	for _, o := range samples {
		if o.GetNamespace() != "" {
			t.Errorf("%s names a namespace; the samples go wherever -n puts them", o.key())
		}
		if gv := o.GroupVersionKind(); gv.Group == group {
			for _, msg := range validate(t, crds[gv.Kind], o) {
				t.Errorf("%s: %s", o.key(), msg)
			}
		}
	}
	c := samples.find("Corpus", "", "parentrag-docs")
	if c == nil {
		t.Fatalf("%s has no Corpus parentrag-docs, the name the Retriever of config/samples serves", dir)
	}
	return samples, convert[v1alpha1.Corpus](t, *c)
}

func TestClaimSamplesAreCoherent(t *testing.T) {
	_, c := checkVariant(t, "config/samples/claims")
	rt := render(t, "config/samples").find("Retriever", "", "parentrag-docs")
	retriever := convert[v1alpha1.Retriever](t, *rt)
	if c.GetIndexingMode() != v1alpha1.IndexingJob || !c.UsesClaims() {
		t.Fatalf("the claims sample is not built by Jobs on claims: %+v", c.Spec)
	}
	modes := c.Spec.ParentStore.PersistentVolumeClaim.AccessModes
	if retriever.GetReplicas() > 1 && !containsMode(modes, corev1.ReadWriteMany) && !containsMode(modes, corev1.ReadOnlyMany) {
		t.Fatalf("the sample Retriever's %d replicas cannot mount %v claims", retriever.GetReplicas(), modes)
	}
}

// containsMode reports whether modes holds m.
func containsMode(modes []corev1.PersistentVolumeAccessMode, m corev1.PersistentVolumeAccessMode) bool {
	for _, x := range modes {
		if x == m {
			return true
		}
	}
	return false
}

// TestRolloutSampleGatePassesOnTheDocs builds the docs sample as the
// samples' handbook policy splits it and measures the rollout sample's golden
// queries on it: the gate a user copies must pass on the documents it
// ships with.
func TestRolloutSampleGatePassesOnTheDocs(t *testing.T) {
	samples, c := checkVariant(t, "config/samples/rollout")
	g := c.QualityGate()
	if g == nil {
		t.Fatal("the rollout sample has no quality gate")
	}
	golden := samples.find("ConfigMap", "", g.GoldenQueries.Name)
	if golden == nil {
		t.Fatalf("the golden queries ConfigMap %s is not in the sample", g.GoldenQueries.Name)
	}
	queries, err := rollout.ParseGolden([]byte(convert[corev1.ConfigMap](t, *golden).Data["queries.jsonl"]))
	if err != nil {
		t.Fatal(err)
	}
	if preview := samples.find("Retriever", "", "parentrag-docs-preview"); preview == nil || convert[v1alpha1.Retriever](t, *preview).GetTrack() != v1alpha1.TrackCandidate {
		t.Fatal("the rollout sample has no preview Retriever on the Candidate track")
	}
	r := docsRetriever(t)
	res, err := rollout.EvaluateGate(context.Background(), queries, r, nil, rollout.GateSpec{MinHitRate: 0.8, MaxDrop: -1, MinQueries: g.MinQueries})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != rollout.OutcomePassed {
		t.Fatalf("the sample's gate on the docs: %s (misses %v)", res.Message, res.Misses)
	}
}

// docsRetriever indexes the docs ConfigMap of the samples with the
// samples' handbook policy, in memory.
func docsRetriever(t *testing.T) *retrieve.Retriever {
	t.Helper()
	samples := render(t, "config/samples")
	cm := convert[corev1.ConfigMap](t, *samples.find("ConfigMap", "", "parentrag-docs"))
	p := convert[v1alpha1.ChunkingPolicy](t, *samples.find("ChunkingPolicy", "", samplePolicy))
	compiled, err := policy.Compile(&p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var docs []hierarchy.Document
	for key, text := range cm.Data {
		docs = append(docs, hierarchy.Document{ID: cm.Name + "/" + key, Title: document.MarkdownTitle(text), Text: text})
	}
	lex, err := bm25.NewLexical(v1alpha1.DefaultK1, v1alpha1.DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := indexer.Build(context.Background(), docs, compiled.Builder, lex, indexer.Options{ContextWeight: v1alpha1.DefaultContextWeight})
	if err != nil {
		t.Fatal(err)
	}
	return &retrieve.Retriever{Embedder: ix.Embedder, Children: ix.Store.(index.Searcher), Parents: parentstore.NewMemory(ix.Parents)}
}
