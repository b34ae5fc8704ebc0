package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/parentrag/parentrag/internal/indexjob"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// indexFlags configure `parentrag index`.
type indexFlags struct {
	plan, namespace, volume, active, cacheDir, unitCacheDir string
	otlpEndpoint                                            string
}

// newIndexCommand builds one revision as an indexing Job does: the plan
// comes from a ConfigMap, the bundle goes to the revision's volume, and
// progress, result or failure go back to the plan's status ConfigMap.
func newIndexCommand() *cobra.Command {
	var f indexFlags
	cmd := &cobra.Command{
		Use:   "index --plan-configmap NAME --volume DIR",
		Short: "Build a Corpus revision from the operator's plan (what an indexing Job runs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.plan == "" || f.volume == "" || f.namespace == "" {
				return fmt.Errorf("--plan-configmap, --volume and --namespace (or $POD_NAMESPACE) are required")
			}
			ctx, stopTracing, err := startTracing(cmd, f.otlpEndpoint, "parentrag-index")
			if err != nil {
				return err
			}
			defer stopTracing()
			build.TuneCollector()
			cfg, err := config.GetConfig()
			if err != nil {
				return fmt.Errorf("connecting to the API server: %w", err)
			}
			c, err := client.New(cfg, client.Options{})
			if err != nil {
				return err
			}
			r := &indexjob.Runner{Client: c, Namespace: f.namespace, Volume: f.volume, ActiveVolume: f.active,
				EmbeddingCacheDir: f.cacheDir, UnitCacheDir: f.unitCacheDir, OnProgress: logProgress(cmd.ErrOrStderr())}
			start := time.Now()
			if err := r.Run(ctx, f.plan); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "built the revision of %s into %s in %s\n", f.plan, f.volume, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.plan, "plan-configmap", "", "ConfigMap holding the plan written by the operator")
	fl.StringVar(&f.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "namespace of the plan (default $POD_NAMESPACE)")
	fl.StringVar(&f.volume, "volume", "", "the revision's volume; the bundle is written to its bundle/ directory")
	fl.StringVar(&f.active, "active-volume", "", "the active revision's volume, for the quality gate")
	fl.StringVar(&f.cacheDir, "embedding-cache-dir", "", "the Corpus's embedding cache (none when empty)")
	fl.StringVar(&f.unitCacheDir, "unit-cache-dir", "", "the Corpus's unit cache, which keeps each document's split and analyses between builds (default: units/ in --embedding-cache-dir when set, else none)")
	otlpFlag(fl, &f.otlpEndpoint, "the build, the child of the operator's span that TRACEPARENT names")
	return cmd
}

// logProgress prints one line per stage step at most every five seconds,
// and every stage's end: a Job's log has no terminal for a progress bar.
func logProgress(w io.Writer) func(indexer.Progress) {
	var last time.Time
	return func(p indexer.Progress) {
		if time.Since(last) < 5*time.Second && p.Done != p.Total {
			return
		}
		last = time.Now()
		reused := ""
		if p.Reused > 0 {
			reused = fmt.Sprintf(" (%d reused from the unit cache)", p.Reused)
		}
		fmt.Fprintf(w, "%s %s %d/%d%s\n", last.UTC().Format(time.RFC3339), p.Stage, p.Done, p.Total, reused)
	}
}
