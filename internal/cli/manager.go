package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// managerFlags configure the operator.
type managerFlags struct {
	metricsAddr, probeAddr string
	leaderElect            bool
	image                  string
	concurrentBuilds       int
	noCrossNamespaceRefs   bool
	embeddingCacheDir      string
	watchNamespaces        []string
	remoteMemory           string
	otlpEndpoint           string
}

// newManagerCommand runs the operator: the ChunkingPolicy, Corpus and
// Retriever controllers.
func newManagerCommand() *cobra.Command {
	var f managerFlags
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the operator: reconcile ChunkingPolicies, Corpora and Retrievers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseDevMode(false)))
			stopTracing, err := telemetry.Setup(cmd.Context(), telemetry.Config{Endpoint: f.otlpEndpoint, ServiceName: "parentrag-manager"})
			if err != nil {
				return fmt.Errorf("--otlp-endpoint: %w", err)
			}
			defer flushTraces(stopTracing, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))
			mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
				Scheme:                 controllers.NewScheme(),
				Metrics:                metricsserver.Options{BindAddress: f.metricsAddr},
				HealthProbeBindAddress: f.probeAddr,
				LeaderElection:         f.leaderElect,
				LeaderElectionID:       "parentrag.parentrag.io",
				Cache:                  controllers.CacheOptions(f.watchNamespaces...),
				Client:                 controllers.ClientOptions(),
			})
			if err != nil {
				return fmt.Errorf("creating manager: %w", err)
			}
			image, err := managerImage(cmd.Context(), mgr, f.image)
			if err != nil {
				return err
			}
			remoteMemory, err := resource.ParseQuantity(f.remoteMemory)
			if err != nil || remoteMemory.Value() <= 0 {
				return fmt.Errorf("--remote-memory %q: want a positive quantity such as 256Mi", f.remoteMemory)
			}
			if err := controllers.Setup(mgr, controllers.Options{Image: image, ConcurrentBuilds: f.concurrentBuilds, EmbeddingCacheDir: f.embeddingCacheDir, NoCrossNamespaceRefs: f.noCrossNamespaceRefs, RemoteMemory: remoteMemory.Value()}); err != nil {
				return err
			}
			if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
				return err
			}
			if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
				return err
			}
			return mgr.Start(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "address of the metrics endpoint (0 disables it)")
	fl.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of the health probes")
	fl.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader, for more than one operator replica")
	fl.StringVar(&f.image, "image", os.Getenv("PARENTRAG_IMAGE"), "image of query pods and indexing Jobs when a Retriever or Corpus names none (env PARENTRAG_IMAGE; default: the operator's own image, read from its pod)")
	fl.IntVar(&f.concurrentBuilds, "concurrent-builds", 2, "how many Corpora index at once")
	fl.StringVar(&f.embeddingCacheDir, "embedding-cache-dir", "", "where each Corpus's embedding cache is kept (default: parentrag-embedding-cache in the temporary directory)")
	fl.BoolVar(&f.noCrossNamespaceRefs, "no-cross-namespace-refs", false, "refuse a Corpus's sourceRef to a Flux source object in another namespace, as Flux's flag of that name does")
	fl.StringVar(&f.remoteMemory, "remote-memory", "256Mi", "most text of the documents of URL and sourceRef sources the operator holds in memory at once, for every Corpus together; a source over it alone fails (index its Corpus in a Job), one that finds it taken by others is retried")
	fl.StringSliceVar(&f.watchNamespaces, "watch-namespace", nil, "reconcile only the objects of these namespaces (repeat or separate with commas; default: every namespace)")
	otlpFlag(fl, &f.otlpEndpoint, "each reconcile of a Corpus and its build; indexing Jobs get the endpoint and the reconcile's span as TRACEPARENT")
	return cmd
}

// managerImage is the image query pods and indexing Jobs run when their
// spec names none: the one given, else the operator's own, read from its
// pod.
func managerImage(ctx context.Context, mgr ctrl.Manager, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	image, err := controllers.OwnImage(ctx, mgr.GetAPIReader(), os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME"))
	if err != nil {
		return "", err
	}
	ctrl.Log.Info("query pods and indexing Jobs run the operator's own image", "image", image)
	return image, nil
}
