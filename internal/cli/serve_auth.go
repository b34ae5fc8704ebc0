package cli

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/parentrag/parentrag/internal/server"
)

// Values of --auth.
const (
	authNone       = "none"
	authBearer     = "bearer"
	authKubernetes = "kubernetes"
)

// serveAuthFlags say who may query the server.
type serveAuthFlags struct {
	mode string
	// tokenDir holds the accepted tokens with --auth=bearer.
	tokenDir    string
	tokenReload time.Duration
	// retriever is namespace/name, what --auth=kubernetes authorizes
	// against.
	retriever string
	cacheTTL  time.Duration
}

// register adds the auth flags to fl.
func (f *serveAuthFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.mode, "auth", authNone, "who may query and read /metrics: none (anyone who reaches the server), bearer (a token from --auth-token-dir) or kubernetes (a Kubernetes token whose user may get retrievers/query on --auth-retriever)")
	fl.StringVar(&f.tokenDir, "auth-token-dir", "", "with --auth=bearer: directory whose every file holds one accepted token (a mounted Secret)")
	fl.DurationVar(&f.tokenReload, "auth-token-reload", server.DefaultTokenReload, "with --auth=bearer: a request rereads --auth-token-dir once its last read is older than this")
	fl.StringVar(&f.retriever, "auth-retriever", "", "with --auth=kubernetes: the Retriever, as namespace/name, a caller must be allowed to query")
	fl.DurationVar(&f.cacheTTL, "auth-cache-ttl", server.DefaultReviewTTL, "with --auth=kubernetes: how long a TokenReview and SubjectAccessReview decision is reused")
}

// check refuses an unknown mode and a mode without what it needs.
func (f *serveAuthFlags) check() error {
	switch f.mode {
	case authNone, authBearer, authKubernetes:
	default:
		return fmt.Errorf("--auth %q: want none, bearer or kubernetes", f.mode)
	}
	switch {
	case f.mode == authBearer && f.tokenDir == "":
		return fmt.Errorf("--auth=bearer needs --auth-token-dir: the directory of accepted tokens")
	case f.mode != authBearer && f.tokenDir != "":
		return fmt.Errorf("--auth-token-dir is only read with --auth=bearer")
	case f.mode == authKubernetes && !validRetrieverRef(f.retriever):
		return fmt.Errorf("--auth=kubernetes needs --auth-retriever namespace/name, got %q", f.retriever)
	case f.mode != authKubernetes && f.retriever != "":
		return fmt.Errorf("--auth-retriever is only read with --auth=kubernetes")
	case f.tokenReload <= 0 || f.cacheTTL <= 0:
		return fmt.Errorf("--auth-token-reload and --auth-cache-ttl: want more than 0")
	}
	return nil
}

// validRetrieverRef reports whether ref is namespace/name.
func validRetrieverRef(ref string) bool {
	ns, name, ok := strings.Cut(ref, "/")
	return ok && ns != "" && name != "" && !strings.Contains(name, "/")
}

// authorizer returns the server's Authorizer for the flags: nil with
// --auth=none.
func (f *serveAuthFlags) authorizer(log *slog.Logger) (server.Authorizer, error) {
	switch f.mode {
	case authBearer:
		d, err := server.NewTokenDir(f.tokenDir, f.tokenReload, log)
		if err != nil {
			return nil, fmt.Errorf("--auth-token-dir: %w", err)
		}
		return d, nil
	case authKubernetes:
		cfg, err := config.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("--auth=kubernetes: finding the cluster: %w", err)
		}
		ns, name, _ := strings.Cut(f.retriever, "/")
		return server.NewKubeReviewer(cfg, ns, name, server.KubeReviewerOptions{TTL: f.cacheTTL, Log: log})
	}
	return nil, nil
}
