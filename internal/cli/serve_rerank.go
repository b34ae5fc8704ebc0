package cli

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/parentrag/parentrag/internal/retrieval/rerank"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// rerankFlags configure the optional rerank stage of parentrag serve.
type rerankFlags struct {
	url, convention, model, target string
	topN, retries                  int
	timeout                        time.Duration
}

// register adds the --rerank-* flags.
func (f *rerankFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.url, "rerank-url", "", "base URL of a reranker that rescores each query's first stage (default: no reranking)")
	fl.StringVar(&f.convention, "rerank-convention", string(rerank.TEI), "reranker wire format: TEI (POST /rerank) or Cohere (POST /v1/rerank, also Jina)")
	fl.StringVar(&f.model, "rerank-model", "", "model name sent to a Cohere-convention reranker")
	fl.StringVar(&f.target, "rerank-target", string(retrieve.RerankParents), "what is rescored: Parents (whole) or Children (each matching child)")
	fl.IntVar(&f.topN, "rerank-top-n", retrieve.DefaultRerankTopN, "first-stage parents rescored (at least the query's maxParents)")
	fl.DurationVar(&f.timeout, "rerank-timeout", rerank.DefaultTimeout, "longest one reranker call may take before it is retried or the first-stage order is kept")
	fl.IntVar(&f.retries, "rerank-retries", rerank.DefaultRetries, "times a failed reranker call is repeated (network errors, 429, 5xx)")
}

// stage returns the rerank stage the flags describe: nil without
// --rerank-url, an error for values out of range.
func (f *rerankFlags) stage() (*retrieve.Rerank, error) {
	if f.url == "" {
		return nil, nil
	}
	target := retrieve.RerankTarget(f.target)
	if target != retrieve.RerankParents && target != retrieve.RerankChildren {
		return nil, fmt.Errorf("--rerank-target %q: want Parents or Children", f.target)
	}
	if f.topN < 1 || f.timeout <= 0 || f.retries < 0 {
		return nil, fmt.Errorf("--rerank-top-n must be at least 1, --rerank-timeout more than 0 and --rerank-retries 0 or more")
	}
	retries := f.retries
	if retries == 0 {
		retries = -1 // rerank.Options reads 0 as its default
	}
	c, err := rerank.New(rerank.Options{URL: f.url, Convention: rerank.Convention(f.convention), Model: f.model, Timeout: f.timeout, Retries: retries})
	if err != nil {
		return nil, fmt.Errorf("--rerank-url %s: %w", f.url, err)
	}
	return &retrieve.Rerank{Reranker: c, Target: target, TopN: f.topN}, nil
}
