package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// The rerank flags build the server's rerank stage, none without
// --rerank-url, and bad values are refused before anything loads.
func TestServeRerankFlags(t *testing.T) {
	parse := func(args ...string) *serveFlags {
		cmd := &cobra.Command{Use: "serve"}
		var f serveFlags
		f.register(cmd)
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		return &f
	}
	if o := parse().serverOptions(); o.Rerank != nil {
		t.Errorf("without --rerank-url: rerank stage %+v", o.Rerank)
	}
	o := parse("--rerank-url", "http://reranker:8080", "--rerank-convention", "Cohere", "--rerank-model", "jina-reranker-v2",
		"--rerank-target", "Children", "--rerank-top-n", "30", "--rerank-timeout", "500ms").serverOptions()
	if o.Rerank == nil || o.Rerank.Reranker == nil || o.Rerank.Target != retrieve.RerankChildren || o.Rerank.TopN != 30 {
		t.Errorf("rerank stage %+v does not follow the flags", o.Rerank)
	}
	empty := t.TempDir()
	for _, args := range [][]string{
		{"--rerank-convention", "Voyage"}, {"--rerank-target", "Documents"}, {"--rerank-top-n", "0"}, {"--rerank-timeout", "0s"},
	} {
		_, _, err := execute(t, append([]string{"serve", "--index", empty, "--rerank-url", "http://reranker:8080"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) && !strings.Contains(err.Error(), args[1]) {
			t.Errorf("serve %v: %v, want an error naming %s", args, err, args[0])
		}
	}
}
