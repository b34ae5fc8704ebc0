package controllers

import (
	"github.com/parentrag/parentrag/api/v1alpha1"
)

// rerankArgs are the query server's rerank flags for spec.rerank; none
// without it. Fields left out take the server's defaults, which are the
// API's.
func rerankArgs(r *v1alpha1.Retriever) []string {
	rr := r.Spec.Rerank
	if rr == nil {
		return nil
	}
	args := []string{"--rerank-url=" + rr.URL}
	if rr.Convention != "" {
		args = append(args, "--rerank-convention="+string(rr.Convention))
	}
	if rr.Model != "" {
		args = append(args, "--rerank-model="+rr.Model)
	}
	if rr.Target != "" {
		args = append(args, "--rerank-target="+string(rr.Target))
	}
	if rr.TopN > 0 {
		args = append(args, "--rerank-top-n="+itoa(rr.TopN))
	}
	if rr.Timeout != nil {
		args = append(args, "--rerank-timeout="+rr.Timeout.Duration.String())
	}
	if rr.Retries != nil {
		args = append(args, "--rerank-retries="+itoa(int(*rr.Retries)))
	}
	return args
}
