package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// adaptiveFlags tune the Adaptive mode of serve and local query.
type adaptiveFlags struct {
	mergeShare      float64
	windowSentences int
}

// register adds the adaptive flags to fl.
func (f *adaptiveFlags) register(fl *pflag.FlagSet) {
	fl.Float64Var(&f.mergeShare, "merge-share", retrieve.DefaultMergeShare, "Adaptive mode: share of a unit's children that must match for the unit to be returned in their place, above 0 and at most 1")
	fl.IntVar(&f.windowSentences, "window-sentences", retrieve.DefaultWindowSentences, "Adaptive mode: sentences each side of a child returned in a window, 0 to 10")
}

// options returns the adaptive options the flags set.
func (f adaptiveFlags) options() retrieve.AdaptiveOptions {
	return retrieve.AdaptiveOptions{MergeShare: f.mergeShare, WindowSentences: f.windowSentences}
}

// checkMode refuses an unknown mode and adaptive flags out of range.
func checkMode(mode string, a adaptiveFlags) error {
	switch retrieve.Mode(mode) {
	case retrieve.ModeParents, retrieve.ModeAdaptive:
	default:
		return fmt.Errorf("--mode %q: want Parents or Adaptive", mode)
	}
	if a.mergeShare <= 0 || a.mergeShare > 1 {
		return fmt.Errorf("--merge-share %v: want above 0 and at most 1", a.mergeShare)
	}
	if a.windowSentences < 0 || a.windowSentences > retrieve.MaxWindowSentences {
		return fmt.Errorf("--window-sentences %d: want 0 to %d", a.windowSentences, retrieve.MaxWindowSentences)
	}
	return nil
}
