// Package server is parentrag's query server: it answers POST /v1/retrieve
// from one loaded revision bundle, and the same retrieval in the protocols
// clients already speak (LangChain's remote retriever, OpenAI's vector-store
// search, MCP), all described at /openapi.json; it reports liveness
// (/healthz), readiness (/readyz: a bundle is loaded) and Prometheus metrics
// (/metrics), and shuts down gracefully, finishing the requests in flight.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// Defaults and limits of Options and of a request.
const (
	// DefaultAddr is where `parentrag serve` listens unless told otherwise.
	DefaultAddr            = ":8080"
	DefaultCorpus          = "default"
	DefaultMaxBodyBytes    = 64 << 10
	DefaultRequestTimeout  = 10 * time.Second
	DefaultShutdownTimeout = 20 * time.Second
	// DefaultShutdownDelay is how long a stopping server keeps answering
	// with /readyz at 503, so that endpoints stop routing to it before it
	// closes its listener.
	DefaultShutdownDelay = 5 * time.Second
	// DefaultQueueWait is how long a request waits for a query slot
	// before it is refused with 503.
	DefaultQueueWait = 250 * time.Millisecond
	// DefaultMaxQueryTerms bounds the distinct terms of a query after
	// analysis.
	DefaultMaxQueryTerms = 1024
	// DefaultMaxPostings bounds the postings one child search may scan.
	DefaultMaxPostings = 50_000_000
	// DefaultHeavyBodyBytes and DefaultHeavyPostings are where a query
	// becomes heavy: it is then searched in the heavy lane.
	DefaultHeavyBodyBytes = 8 << 10
	DefaultHeavyPostings  = 2_000_000
	// MaxMaxParents and MaxChildTopK bound maxParents and childTopK.
	MaxMaxParents = 20
	MaxChildTopK  = 1000
)

// Timeouts of the HTTP server beside the per-request timeout.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	idleTimeout       = 120 * time.Second
	// writeSlack is how much longer than the request timeout a response
	// may take to write.
	writeSlack = 5 * time.Second
)

// Options configure a Server. Zero fields take their defaults.
type Options struct {
	// Corpus names the Corpus served: the id of the one vector store of
	// the OpenAI-compatible endpoints (default "default").
	Corpus string
	// Defaults fill in what a request leaves out: ChildTopK, MaxParents and
	// Aggregation (the retrieval package's defaults when zero).
	Defaults retrieve.Options
	// MaxBodyBytes caps a request body (default 64 KiB); larger is 413.
	MaxBodyBytes int64
	// BodyBudget bounds the bytes of request bodies held at once, being
	// received or not yet answered, counted as they arrive (default 16
	// MiB, at least MaxBodyBytes); a body that would pass it is refused
	// with 503 and Retry-After. Bodies are read, within 2 s, before their
	// requests take a query slot.
	BodyBudget int64
	// RequestTimeout bounds one retrieval (default 10s); past it the
	// request fails with 504.
	RequestTimeout time.Duration
	// MaxInFlight bounds the retrievals running at once (default twice
	// GOMAXPROCS).
	MaxInFlight int
	// MaxQueued bounds the requests waiting for a slot beyond MaxInFlight
	// (default 4 × MaxInFlight; negative means none wait); a request that
	// finds the queue full is refused at once with 503 and Retry-After.
	MaxQueued int
	// QueueWait is the longest a queued request waits for a slot before
	// it is refused with 503 and Retry-After (default 250ms).
	QueueWait time.Duration
	// MaxQueryTerms refuses (400) a query with more distinct terms after
	// analysis (default 1024; negative means no limit).
	MaxQueryTerms int
	// MaxPostings refuses (400) a query whose terms reach more postings in
	// the child index (default 50,000,000; negative means no limit).
	MaxPostings int
	// HeavyBodyBytes sends a request whose body is larger to the heavy
	// lane once the body is read (default 8 KiB; negative means none by
	// size).
	HeavyBodyBytes int64
	// HeavyPostings sends a query whose terms reach more postings in the
	// child index to the heavy lane once it is analysed (default
	// 2,000,000; negative means none by cost). It is a floor: with
	// HeavyPostingsPerChild the limit grows with the index.
	HeavyPostings int
	// HeavyPostingsPerChild raises HeavyPostings to this many postings per
	// child of the loaded index (default 8; negative keeps HeavyPostings
	// whatever the index).
	HeavyPostingsPerChild int
	// MaxPostingsPerChild raises MaxPostings likewise (default 64;
	// negative keeps MaxPostings).
	MaxPostingsPerChild int
	// MaxHeavyInFlight bounds the heavy queries running at once (default
	// a quarter of MaxInFlight, at least 1); as many more may wait
	// QueueWait, and beyond that a heavy query is refused with 429 and
	// Retry-After, leaving MaxInFlight slots to the others.
	MaxHeavyInFlight int
	// ShutdownDelay is how long the server keeps accepting and answering
	// requests once Serve's context is cancelled, with /readyz at 503 and
	// keep-alives off, before it stops listening (default 5s; negative
	// means none). It covers the time Kubernetes takes to remove a
	// terminating pod from its Service's endpoints.
	ShutdownDelay time.Duration
	// ShutdownTimeout bounds the drain of in-flight requests once the
	// listener is closed (default 20s).
	ShutdownTimeout time.Duration
	// Auth, when set, guards every endpoint but /healthz and /readyz
	// (see guard); nil lets anyone query.
	Auth Authorizer
	// Rerank, when set, rescores the first stage of every query; a
	// reranker failure counts in parentrag_rerank_fallbacks_total and the
	// query keeps its first-stage order.
	Rerank *retrieve.Rerank
	// Inspector turns on the inspector page and bounds its policy preview.
	Inspector InspectorOptions
	// Registry receives the server's metrics and is what /metrics serves.
	// Nil means a new registry that also holds the Go and process
	// collectors.
	Registry *prometheus.Registry
}

// withDefaults returns o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.Corpus == "" {
		o.Corpus = DefaultCorpus
	}
	if o.Defaults.ChildTopK <= 0 {
		o.Defaults.ChildTopK = retrieve.DefaultChildTopK
	}
	if o.Defaults.MaxParents <= 0 {
		o.Defaults.MaxParents = retrieve.DefaultMaxParents
	}
	if o.Defaults.Aggregation == "" {
		o.Defaults.Aggregation = retrieve.AggregateMax
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.BodyBudget <= 0 {
		o.BodyBudget = DefaultBodyBudget
	}
	o.BodyBudget = max(o.BodyBudget, o.MaxBodyBytes)
	o.Inspector = o.Inspector.withDefaults()
	if o.Inspector.Enabled {
		o.BodyBudget = max(o.BodyBudget, o.Inspector.MaxBodyBytes)
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 2 * runtime.GOMAXPROCS(0)
	}
	switch {
	case o.MaxQueued == 0:
		o.MaxQueued = 4 * o.MaxInFlight
	case o.MaxQueued < 0:
		o.MaxQueued = 0
	}
	if o.QueueWait <= 0 {
		o.QueueWait = DefaultQueueWait
	}
	if o.MaxQueryTerms == 0 {
		o.MaxQueryTerms = DefaultMaxQueryTerms
	}
	if o.MaxPostings == 0 {
		o.MaxPostings = DefaultMaxPostings
	}
	o.HeavyBodyBytes = defaultOrNone(o.HeavyBodyBytes, DefaultHeavyBodyBytes)
	o.HeavyPostings = defaultOrNone(o.HeavyPostings, DefaultHeavyPostings)
	o.HeavyPostingsPerChild = defaultOrNone(o.HeavyPostingsPerChild, DefaultHeavyPostingsPerChild)
	o.MaxPostingsPerChild = defaultOrNone(o.MaxPostingsPerChild, DefaultMaxPostingsPerChild)
	if o.MaxHeavyInFlight <= 0 {
		o.MaxHeavyInFlight = max(1, o.MaxInFlight/4)
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	switch {
	case o.ShutdownDelay == 0:
		o.ShutdownDelay = DefaultShutdownDelay
	case o.ShutdownDelay < 0:
		o.ShutdownDelay = 0
	}
	return o
}

// Server answers queries from the bundle last given to SetBundle. It is
// safe for concurrent use.
type Server struct {
	opts     Options
	loaded   atomic.Pointer[loaded]
	draining atomic.Bool
	metrics  *metrics
	// rerankFallbacks counts queries the reranker failed.
	rerankFallbacks prometheus.Counter
	admit           *admission
	bodies          *bodyBudget
	// previews is the inspector's preview lane (see newPreviewLane).
	previews *lane
	// open are the paths that answer without a token (see guard).
	open    map[string]bool
	handler http.Handler
	// beforeRetrieve, when set (by tests), runs before each retrieval
	// with the request's context.
	beforeRetrieve func(context.Context)

	// embedding records the query embeddings sent to an endpoint.
	embedding *embeddingMetrics
}

// loaded is the bundle being served with what a request needs from it.
type loaded struct {
	bundle *bundle.Bundle
	// length measures texts for budgets, in the bundle's length unit;
	// nil, with lengthErr set, when that unit cannot be measured here.
	length    split.LengthFunc
	lengthErr error
	// cost are the query-cost limits for this index's size.
	cost costLimits
}

// New returns a Server with no bundle: it is live but not ready until
// SetBundle is called.
func New(opts Options) *Server {
	s := &Server{opts: opts.withDefaults()}
	if s.opts.Registry == nil {
		s.opts.Registry = newDefaultRegistry()
	}
	s.metrics = newMetrics(s.opts.Registry)
	s.rerankFallbacks = newRerankFallbacks(s.opts.Registry)
	s.embedding = newEmbeddingMetrics(s.opts.Registry)
	s.admit = newAdmission(s.opts)
	s.bodies = &bodyBudget{limit: s.opts.BodyBudget}
	s.previews = newPreviewLane(s.opts)
	s.open = openPathsOf(s.opts)
	s.handler = s.routes()
	return s
}

// SetBundle serves b from now on; the server is ready while b is not nil.
// It is safe to call while requests are served: a request uses the bundle
// that was set when it started. The replaced bundle is not closed, since
// requests in flight may still read it.
func (s *Server) SetBundle(b *bundle.Bundle) {
	if b == nil {
		s.loaded.Store(nil)
		s.metrics.setBundle(nil)
		return
	}
	s.withRerank(b)
	s.withEmbeddingMetrics(b)
	l := &loaded{bundle: b, cost: s.opts.costLimitsFor(b.Manifest.Children)}
	l.length, l.lengthErr = policy.LengthFunc(b.Manifest.LengthUnit, b.Manifest.Tokenizer)
	s.loaded.Store(l)
	s.metrics.setBundle(&b.Manifest)
}

// Handler returns the server's routes, instrumented: /v1/retrieve, the
// protocol endpoints (/v1/langchain/retrieve, /v1/vector_stores..., /mcp),
// /openapi.json, /healthz, /readyz and /metrics, and the inspector's page
// and preview when it is enabled. Serve serves them; a test may mount them
// on its own server.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves on ln until ctx is cancelled. It then turns /readyz to 503
// and closes each connection after its next response, keeps answering for
// Options.ShutdownDelay while endpoints stop routing to it, stops
// accepting connections, and waits up to Options.ShutdownTimeout for the
// requests in flight to complete; it returns nil when they all did. ln is
// closed when Serve returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      s.opts.RequestTimeout + writeSlack,
		IdleTimeout:       idleTimeout,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	// Connections are not closed while idle, which races a client about
	// to reuse one: each closes after its next response instead (see
	// closeWhileDraining).
	s.draining.Store(true)
	select {
	case <-time.After(s.opts.ShutdownDelay):
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	}
	return nil
}

// routes returns the instrumented mux.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/retrieve", s.instrument("/v1/retrieve", http.HandlerFunc(s.retrieve)))
	mux.Handle(LangChainPath, s.instrument(LangChainPath, http.HandlerFunc(s.langChainRetrieve)))
	mux.Handle(VectorStoresPath, s.instrument(VectorStoresPath, http.HandlerFunc(s.vectorStores)))
	mux.Handle(VectorStorePath, s.instrument(VectorStorePath, http.HandlerFunc(s.vectorStore)))
	mux.Handle(VectorStoreSearchPath, s.instrument(VectorStoreSearchPath, http.HandlerFunc(s.vectorStoreSearch)))
	mux.Handle(MCPPath, s.instrument(MCPPath, s.mcpEndpoint()))
	mux.Handle(OpenAPIPath, s.instrument(OpenAPIPath, http.HandlerFunc(serveOpenAPI)))
	mux.Handle("/healthz", s.instrument("/healthz", http.HandlerFunc(s.healthz)))
	mux.Handle("/readyz", s.instrument("/readyz", http.HandlerFunc(s.readyz)))
	mux.Handle("/metrics", s.instrument("/metrics", s.metrics.handler))
	s.inspectorRoutes(mux)
	mux.Handle("/", s.instrument("other", http.HandlerFunc(notFound)))
	return s.closeWhileDraining(s.guard(mux))
}

// closeWhileDraining closes each connection after its response once the
// server is shutting down, so that clients open their next connection
// through the Service, to a pod that is not going away.
func (s *Server) closeWhileDraining(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// healthz answers 200 while the process serves at all.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r) {
		return
	}
	writeText(w, http.StatusOK, "ok")
}

// readyz answers 200 once a bundle is loaded, 503 before and while
// shutting down.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r) {
		return
	}
	switch {
	case s.draining.Load():
		writeText(w, http.StatusServiceUnavailable, "shutting down")
	case s.loaded.Load() == nil:
		writeText(w, http.StatusServiceUnavailable, "no index loaded yet")
	default:
		writeText(w, http.StatusOK, "ok")
	}
}

// allowGet answers 405 to anything but GET and HEAD and reports whether the
// request may go on.
func allowGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	writeText(w, http.StatusMethodNotAllowed, "method not allowed")
	return false
}

// maxEchoedPath is how much of an unknown path a 404 names.
const maxEchoedPath = 128

// notFound answers 404 in JSON, naming the path when it is short: a long
// one is not echoed back.
func notFound(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if len(path) > maxEchoedPath {
		path = fmt.Sprintf("(a path of %d bytes)", len(path))
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s: use POST /v1/retrieve (every endpoint: GET /openapi.json)", path))
}

// writeText writes a one-line plain-text response.
func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}
