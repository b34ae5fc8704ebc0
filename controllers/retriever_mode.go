package controllers

import (
	"fmt"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// modeArgs are the query server's mode flags: none for the default mode,
// so that the query pods of Retrievers that do not ask for another one
// keep their arguments.
func modeArgs(r *v1alpha1.Retriever) []string {
	if r.Spec.Mode == "" || r.Spec.Mode == v1alpha1.ModeParents {
		return nil
	}
	args := []string{"--mode=" + string(r.Spec.Mode)}
	if a := r.Spec.Adaptive; a != nil {
		if a.MergePercent > 0 {
			args = append(args, fmt.Sprintf("--merge-share=%.2f", float64(a.MergePercent)/100))
		}
		if a.WindowSentences != nil {
			args = append(args, "--window-sentences="+itoa(int(*a.WindowSentences)))
		}
	}
	return args
}
