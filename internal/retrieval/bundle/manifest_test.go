package bundle

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/chunking"
)

// policyOf returns the normalised policy of strategy s as a manifest
// records it.
func policyOf(t *testing.T, s chunking.Strategy) json.RawMessage {
	t.Helper()
	spec := v1alpha1.ChunkingPolicySpec{Strategy: v1alpha1.Strategy(s)}
	policy, err := json.Marshal(spec.Normalized())
	if err != nil {
		t.Fatal(err)
	}
	return policy
}

func TestManifestParentsOverlapAsItsStrategyDeclares(t *testing.T) {
	for _, s := range chunking.Strategies() {
		if got := (&Manifest{Policy: policyOf(t, s)}).ParentsOverlap(); got != s.ParentsOverlap() {
			t.Errorf("strategy %s: ParentsOverlap() = %v, declared %v", s, got, s.ParentsOverlap())
		}
	}
	for name, policy := range map[string]json.RawMessage{
		"no policy":               nil,
		"no strategy":             json.RawMessage(`{"lengthUnit":"Characters"}`),
		"an undeclared strategy":  json.RawMessage(`{"strategy":"Semantic"}`),
		"a strategy not a string": json.RawMessage(`{"strategy":3}`),
	} {
		if (&Manifest{Policy: policy}).ParentsOverlap() {
			t.Errorf("a manifest with %s says its parents overlap", name)
		}
	}
}

// A bundle's manifest says what its policy was, and nothing else about
// overlaps: a bundle recorded with each strategy, in the manifest format
// bundles have always had, opens with a retriever that merges overlapping
// parents exactly when the strategy declares they overlap.
func TestOpenedBundleMergesOverlapsAsItsStrategyDeclares(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	saved(t, dir, corpus(), "rev")
	for _, s := range chunking.Strategies() {
		editManifest(t, dir, func(m map[string]any) { m["policy"] = map[string]any{"strategy": string(s)} })
		if got := open(t, dir).Retriever.MergeOverlaps; got != s.ParentsOverlap() {
			t.Errorf("a bundle of strategy %s merges overlaps %v, declared %v", s, got, s.ParentsOverlap())
		}
	}
}
