package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/inspector"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/server"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// serveFlags are the flags of parentrag serve.
type serveFlags struct {
	index     string
	namespace string
	configMap string
	dataDir   string
	addr      string
	// corpus names the Corpus served: the OpenAI vector store id.
	corpus      string
	maxParents  int
	childTopK   int
	aggregation string
	// mode and adaptive are what a query returns when it does not say.
	mode     string
	adaptive adaptiveFlags
	// shutdownDelay is how long the server answers after SIGTERM with
	// /readyz at 503; 0 stops at once.
	shutdownDelay time.Duration
	// The server's limits (see server.Options).
	requestTimeout time.Duration
	maxInFlight    int
	maxQueued      int
	queueWait      time.Duration
	maxQueryTerms  int
	maxPostings    int
	// Where the heavy lane starts, and its slots.
	heavyBodyBytes int64
	heavyPostings  int
	// heavyPostingsPerChild and maxPostingsPerChild scale the cost
	// limits with the loaded index.
	heavyPostingsPerChild, maxPostingsPerChild int
	maxHeavyInFlight                           int
	// auth says who may query.
	auth serveAuthFlags
	// rerank is the optional rerank stage.
	rerank rerankFlags
	// otlpEndpoint, when set, turns tracing on and sends spans there.
	otlpEndpoint string
	// search chooses the vectors searched and their fusion.
	search searchFlags
	// inspector serves the inspector page and its policy preview.
	inspector bool
}

// register adds the serve flags to cmd. --namespace defaults to
// $POD_NAMESPACE, as set from the downward API in a pod.
func (f *serveFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.index, "index", "", "local index directory to serve (written by parentrag local index)")
	fl.StringVar(&f.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "namespace of --configmap (default $POD_NAMESPACE)")
	fl.StringVar(&f.configMap, "configmap", "", "manifest ConfigMap of the revision to serve (instead of --index)")
	fl.StringVar(&f.dataDir, "data-dir", "", "where a --configmap revision is unpacked (default: a new temporary directory, removed on exit)")
	fl.StringVar(&f.addr, "addr", server.DefaultAddr, "address to listen on")
	fl.StringVar(&f.corpus, "corpus", "", "name of the Corpus served, the id of its OpenAI vector store (default: the --configmap name less its revision suffix, or the --index directory's name)")
	fl.IntVar(&f.maxParents, "max-parents", retrieve.DefaultMaxParents, fmt.Sprintf("parents returned when a request does not say (1 to %d)", server.MaxMaxParents))
	fl.IntVar(&f.childTopK, "child-top-k", retrieve.DefaultChildTopK, fmt.Sprintf("children searched first when a request does not say (1 to %d)", server.MaxChildTopK))
	fl.StringVar(&f.aggregation, "aggregation", string(retrieve.AggregateMax), "how child scores make a parent score when a request does not say: Max, Mean or Sum")
	fl.StringVar(&f.mode, "mode", string(retrieve.DefaultMode), "what a query returns when it does not say: Parents (each hit child's parent) or Adaptive (the unit of the level that holds enough of the evidence)")
	f.adaptive.register(fl)
	fl.DurationVar(&f.requestTimeout, "request-timeout", server.DefaultRequestTimeout, "longest a query may take, queueing included; past it the request fails with 504")
	fl.IntVar(&f.maxInFlight, "max-in-flight", 0, "most queries searched at once (0: twice GOMAXPROCS)")
	fl.IntVar(&f.maxQueued, "max-queued", 0, "most queries waiting for a slot beyond --max-in-flight; more are refused with 503 (0: 4 × --max-in-flight)")
	fl.DurationVar(&f.queueWait, "queue-wait", server.DefaultQueueWait, "longest a query waits for a slot before it is refused with 503 and Retry-After")
	fl.IntVar(&f.maxQueryTerms, "max-query-terms", server.DefaultMaxQueryTerms, "most distinct terms a query may have after analysis; more is refused with 400 (0: no limit)")
	fl.IntVar(&f.maxPostings, "max-postings", server.DefaultMaxPostings, "most postings a query's terms may reach in the child index; more is refused with 400 (0: no limit)")
	fl.Int64Var(&f.heavyBodyBytes, "heavy-body-bytes", server.DefaultHeavyBodyBytes, "request bodies larger than this are heavy queries, admitted to the heavy lane once read (0: none by size)")
	fl.IntVar(&f.heavyPostings, "heavy-postings", server.DefaultHeavyPostings, "queries whose terms reach more postings are heavy and move to the heavy lane before they are searched; a floor that --heavy-postings-per-child raises with the index (0: none by cost)")
	fl.IntVar(&f.heavyPostingsPerChild, "heavy-postings-per-child", server.DefaultHeavyPostingsPerChild, "raises --heavy-postings to this many postings per child of the loaded index (0: --heavy-postings whatever the index)")
	fl.IntVar(&f.maxPostingsPerChild, "max-postings-per-child", server.DefaultMaxPostingsPerChild, "raises --max-postings to this many postings per child of the loaded index (0: --max-postings whatever the index)")
	fl.IntVar(&f.maxHeavyInFlight, "max-heavy-in-flight", 0, "most heavy queries searched at once, as many more waiting; more are refused with 429 (0: a quarter of --max-in-flight, at least 1)")
	fl.DurationVar(&f.shutdownDelay, "shutdown-delay", server.DefaultShutdownDelay, "after SIGTERM, how long to keep answering with /readyz at 503 while endpoints stop routing here, before closing the listener (0: none)")
	otlpFlag(fl, &f.otlpEndpoint, "each request")
	fl.BoolVar(&f.inspector, "inspector", false, "serve the inspector page at /inspector/ (answers with their matching children, and a policy preview); its preview and the queries it sends need the token --auth asks for")
	f.auth.register(fl)
	f.rerank.register(fl)
	f.search.register(cmd)
}

// check refuses flags that cannot work together or are out of range, and
// an --index that does not exist, before anything listens or loads.
func (f *serveFlags) check() error {
	switch {
	case f.index == "" && f.configMap == "":
		return fmt.Errorf("--index or --configmap is required: the revision to serve")
	case f.index != "" && f.configMap != "":
		return fmt.Errorf("--index and --configmap are exclusive: serve one revision")
	case f.configMap != "" && f.namespace == "":
		return fmt.Errorf("--configmap needs --namespace (or $POD_NAMESPACE)")
	case f.maxParents < 1 || f.maxParents > server.MaxMaxParents:
		return fmt.Errorf("--max-parents %d: want 1 to %d", f.maxParents, server.MaxMaxParents)
	case f.shutdownDelay < 0:
		return fmt.Errorf("--shutdown-delay %s: want 0 or more", f.shutdownDelay)
	case f.requestTimeout <= 0:
		return fmt.Errorf("--request-timeout %s: want more than 0", f.requestTimeout)
	case f.queueWait <= 0:
		return fmt.Errorf("--queue-wait %s: want more than 0", f.queueWait)
	case f.maxInFlight < 0 || f.maxQueued < 0 || f.maxQueryTerms < 0 || f.maxPostings < 0:
		return fmt.Errorf("--max-in-flight, --max-queued, --max-query-terms and --max-postings: want 0 or more")
	case f.heavyBodyBytes < 0 || f.heavyPostings < 0 || f.maxHeavyInFlight < 0 || f.heavyPostingsPerChild < 0 || f.maxPostingsPerChild < 0:
		return fmt.Errorf("--heavy-body-bytes, --heavy-postings, --max-heavy-in-flight, --heavy-postings-per-child and --max-postings-per-child: want 0 or more")
	case f.childTopK < 1 || f.childTopK > server.MaxChildTopK:
		return fmt.Errorf("--child-top-k %d: want 1 to %d", f.childTopK, server.MaxChildTopK)
	}
	if err := f.auth.check(); err != nil {
		return err
	}
	switch retrieve.Aggregation(f.aggregation) {
	case retrieve.AggregateMax, retrieve.AggregateMean, retrieve.AggregateSum:
	default:
		return fmt.Errorf("--aggregation %q: want Max, Mean or Sum", f.aggregation)
	}
	if err := checkMode(f.mode, f.adaptive); err != nil {
		return err
	}
	if f.index != "" {
		if _, err := os.Stat(f.index); err != nil {
			return fmt.Errorf("--index %s: %w", f.index, unwrapPathError(err))
		}
	}
	if err := f.search.apply(&retrieve.Options{}); err != nil {
		return err
	}
	_, err := f.rerank.stage()
	return err
}

// defaults returns the retrieval defaults the flags set.
func (f *serveFlags) defaults() retrieve.Options {
	o := retrieve.Options{
		MaxParents: f.maxParents, ChildTopK: f.childTopK, Aggregation: retrieve.Aggregation(f.aggregation),
		Mode: retrieve.Mode(f.mode), Adaptive: f.adaptive.options(),
	}
	_ = f.search.apply(&o) // check has refused what it cannot apply
	return o
}

// serverOptions are the server options the flags set: a zero limit flag
// means no limit, where server.Options takes a negative one.
func (f *serveFlags) serverOptions() server.Options {
	noLimit := func(n int) int {
		if n == 0 {
			return -1
		}
		return n
	}
	stage, _ := f.rerank.stage() // check has refused what it cannot build
	return server.Options{
		Corpus:   f.corpusName(),
		Defaults: f.defaults(), ShutdownDelay: f.serverShutdownDelay(), Rerank: stage,
		RequestTimeout: f.requestTimeout, MaxInFlight: f.maxInFlight, MaxQueued: f.maxQueued,
		QueueWait: f.queueWait, MaxQueryTerms: noLimit(f.maxQueryTerms), MaxPostings: noLimit(f.maxPostings),
		HeavyBodyBytes: int64(noLimit(int(f.heavyBodyBytes))), HeavyPostings: noLimit(f.heavyPostings),
		HeavyPostingsPerChild: noLimit(f.heavyPostingsPerChild), MaxPostingsPerChild: noLimit(f.maxPostingsPerChild),
		MaxHeavyInFlight: f.maxHeavyInFlight,
		Inspector:        server.InspectorOptions{Enabled: f.inspector},
	}
}

// corpusName is --corpus, or what the revision's source tells of it: a
// revision ConfigMap is named <corpus>-<short revision>; a local index is
// named after its directory.
func (f *serveFlags) corpusName() string {
	switch {
	case f.corpus != "":
		return f.corpus
	case f.configMap != "":
		if i := strings.LastIndexByte(f.configMap, '-'); i > 0 {
			return f.configMap[:i]
		}
		return f.configMap
	}
	return filepath.Base(filepath.Clean(f.index))
}

// serverShutdownDelay is --shutdown-delay as server.Options takes it,
// where zero means the default and a negative delay none.
func (f *serveFlags) serverShutdownDelay() time.Duration {
	if f.shutdownDelay <= 0 {
		return -1
	}
	return f.shutdownDelay
}

// newReader returns a Kubernetes reader: the production one talks to the
// API server, tests inject a fake.
type newReader func() (client.Reader, error)

// kubeReader returns a client of the cluster the process runs in (its
// service account) or of $KUBECONFIG.
func kubeReader() (client.Reader, error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("finding the cluster: %w", err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("creating a kubernetes client: %w", err)
	}
	return c, nil
}

// newServeCommand serves a revision over HTTP.
func newServeCommand() *cobra.Command { return newServeCommandWith(kubeReader) }

// newServeCommandWith is newServeCommand reading ConfigMaps through the
// reader newReader returns.
func newServeCommandWith(reader newReader) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve (--index DIR | --configmap NAME [--namespace NS]) [--addr :8080]",
		Short: "Answer POST /v1/retrieve over HTTP from one revision, with /healthz, /readyz and /metrics",
		Long: "Serve listens at once (so /healthz answers), loads the revision (a local index, or the revision\n" +
			"ConfigMaps unpacked into --data-dir), then turns ready. It stops gracefully on SIGTERM,\n" +
			"finishing the requests in flight.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.check(); err != nil {
				return err
			}
			return runServe(cmd, &f, reader)
		},
	}
	f.register(cmd)
	return cmd
}

// runServe listens, loads the revision while already answering /healthz,
// serves it until the command's context is cancelled, and returns nil after
// a graceful shutdown. A failed load stops the server and is returned.
func runServe(cmd *cobra.Command, f *serveFlags, reader newReader) error {
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	stopTracing, err := telemetry.Setup(cmd.Context(), telemetry.Config{Endpoint: f.otlpEndpoint, ServiceName: "parentrag-serve"})
	if err != nil {
		return fmt.Errorf("--otlp-endpoint: %w", err)
	}
	defer flushTraces(stopTracing, log)
	opts := f.serverOptions()
	auth, err := f.auth.authorizer(log)
	if err != nil {
		return err
	}
	opts.Auth = auth
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", f.addr, err)
	}
	if opts.Rerank != nil {
		opts.Rerank.OnFallback = func(err error) { log.Warn("reranker failed; answering in first-stage order", "error", err) }
	}
	srv := server.New(opts)
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	log.Info("serving", "addr", ln.Addr().String())
	if f.inspector {
		log.Info("inspector enabled", "path", inspector.Prefix)
	}

	start := time.Now()
	b, cleanup, err := loadRevision(ctx, f, reader)
	defer cleanup()
	if err != nil {
		cancel()
		<-served
		if cmd.Context().Err() != nil {
			return nil // stopped while loading: not a failure
		}
		return err
	}
	defer b.Close()
	srv.SetBundle(b)
	m := b.Manifest
	log.Info("revision loaded", "revision", m.Revision, "documents", m.Documents, "parents", m.Parents,
		"children", m.Children, "loadTime", time.Since(start).Round(time.Millisecond))
	return <-served
}

// loadRevision opens the revision the flags name. cleanup, never nil,
// removes what loading created that must not outlive the command (a
// default data directory); call it after the bundle is closed.
func loadRevision(ctx context.Context, f *serveFlags, reader newReader) (*bundle.Bundle, func(), error) {
	if f.index != "" {
		b, err := bundle.Open(f.index)
		return b, func() {}, err
	}
	dataDir, cleanup := f.dataDir, func() {}
	if dataDir == "" {
		tmp, err := os.MkdirTemp("", "parentrag-serve-")
		if err != nil {
			return nil, cleanup, fmt.Errorf("creating a data directory: %w", err)
		}
		dataDir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	b, err := unpackRevision(ctx, reader, f.namespace, f.configMap, filepath.Join(dataDir, f.configMap))
	return b, cleanup, err
}

// unpackRevision unpacks the revision whose manifest ConfigMap is
// namespace/name into dir and opens it.
func unpackRevision(ctx context.Context, reader newReader, namespace, name, dir string) (*bundle.Bundle, error) {
	r, err := reader()
	if err != nil {
		return nil, err
	}
	if _, err := cmbundle.Unpack(ctx, r, namespace, name, dir); err != nil {
		return nil, err
	}
	return bundle.Open(dir)
}
