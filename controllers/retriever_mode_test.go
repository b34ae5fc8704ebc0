package controllers_test

import (
	"slices"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
)

// TestModeArgsOnlyForAdaptive checks that a Retriever in the default mode
// runs its query pods with the arguments they always had, and that mode
// Adaptive passes its settings on.
func TestModeArgsOnlyForAdaptive(t *testing.T) {
	plain := &v1alpha1.Retriever{Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "docs"}}}
	parents := plain.DeepCopy()
	parents.Spec.Mode = v1alpha1.ModeParents
	if got, want := controllers.ClaimServeArgs(parents), controllers.ClaimServeArgs(plain); !slices.Equal(got, want) || slices.ContainsFunc(got, func(a string) bool { return a == "--mode=Parents" }) {
		t.Errorf("mode Parents runs %v, want the default's %v", got, want)
	}
	adaptive := plain.DeepCopy()
	w := int32(2)
	adaptive.Spec.Mode, adaptive.Spec.Adaptive = v1alpha1.ModeAdaptive, &v1alpha1.RetrieverAdaptive{MergePercent: 40, WindowSentences: &w}
	args := controllers.ClaimServeArgs(adaptive)
	for _, want := range []string{"--mode=Adaptive", "--merge-share=0.40", "--window-sentences=2"} {
		if !slices.Contains(args, want) {
			t.Errorf("mode Adaptive runs %v, want %s among them", args, want)
		}
	}
}
