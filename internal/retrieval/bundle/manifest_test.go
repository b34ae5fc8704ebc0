package bundle

import (
	"encoding/json"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

func TestManifestWindowsFollowsThePolicyStrategy(t *testing.T) {
	for strategy, want := range map[v1alpha1.Strategy]bool{v1alpha1.StrategySentenceWindow: true, v1alpha1.StrategyParentChild: false, "": false} {
		spec := v1alpha1.ChunkingPolicySpec{Strategy: strategy}
		policy, err := json.Marshal(spec.Normalized())
		if err != nil {
			t.Fatal(err)
		}
		if got := (&Manifest{Policy: policy}).Windows(); got != want {
			t.Errorf("strategy %q: Windows() = %v, want %v", strategy, got, want)
		}
	}
	if (&Manifest{}).Windows() {
		t.Error("a manifest without a policy says it holds windows")
	}
}
