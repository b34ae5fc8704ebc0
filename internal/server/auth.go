package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Access is what a request asks to do, as an Authorizer decides it.
type Access string

// Accesses.
const (
	// AccessQuery is every guarded endpoint but /metrics: the query API.
	AccessQuery Access = "query"
	// AccessMetrics is GET /metrics.
	AccessMetrics Access = "metrics"
)

// openPaths answer without a token, whatever the Authorizer: the kubelet
// probes them and they tell nothing about the index.
var openPaths = []string{"/healthz", "/readyz"}

// openPathsOf are the paths that answer without a token on a server with
// options o: openPaths, and the inspector's page files when it is enabled
// (a browser opening the page sends no token; the page sends the one its
// user enters with every request for data).
func openPathsOf(o Options) map[string]bool {
	open := map[string]bool{}
	for _, p := range append(slices.Clone(openPaths), o.inspectorPagePaths()...) {
		open[p] = true
	}
	return open
}

// An Authorizer decides whether the caller holding a bearer token may
// have an access. Authorize returns nil to let the request through, or an
// *AuthError saying how it is refused; any other error is answered 503.
// It is called for every request to a path outside the open ones that
// carries a bearer token; one without is refused (401) before.
type Authorizer interface {
	Authorize(ctx context.Context, token string, access Access) error
	// Mode names the Authorizer in metrics: bearer or kubernetes.
	Mode() string
}

// Outcomes of an authorization, the outcome label of
// parentrag_auth_requests_total.
const (
	outcomeAllowed      = "allowed"
	outcomeMissingToken = "missing_token"
	outcomeInvalidToken = "invalid_token"
	outcomeForbidden    = "forbidden"
	outcomeError        = "error"
)

// AuthError is a refused request: the status code it is answered with
// (401 or 403), the outcome it is counted under, and the message the
// caller reads, which never holds the token.
type AuthError struct {
	Code    int
	Outcome string
	Message string
}

func (e *AuthError) Error() string { return e.Message }

// unauthenticated is a 401 for a token nobody accepts.
func unauthenticated(msg string) *AuthError {
	return &AuthError{Code: http.StatusUnauthorized, Outcome: outcomeInvalidToken, Message: msg}
}

// forbidden is a 403 for a caller who may not have the access.
func forbidden(msg string) *AuthError {
	return &AuthError{Code: http.StatusForbidden, Outcome: outcomeForbidden, Message: msg}
}

// missingToken is the 401 of a request without a bearer token.
var missingToken = &AuthError{Code: http.StatusUnauthorized, Outcome: outcomeMissingToken,
	Message: "this endpoint needs a bearer token: send the header \"Authorization: Bearer TOKEN\""}

// guard returns h behind the Authorizer of the options: every path but
// the open ones (see openPathsOf) needs a token the Authorizer accepts,
// and each decision is counted. Without an Authorizer h is returned as it is. Endpoints added
// to the mux later are guarded with no change here.
func (s *Server) guard(h http.Handler) http.Handler {
	az := s.opts.Auth
	if az == nil {
		return h
	}
	outcomes := authOutcomes(s.opts.Registry)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.open[r.URL.Path] {
			h.ServeHTTP(w, r)
			return
		}
		access := accessOf(r)
		err := authorize(r, az, access)
		outcomes.WithLabelValues(az.Mode(), string(access), outcomeOf(err)).Inc()
		if err != nil {
			refuse(w, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// accessOf is the access a request asks for.
func accessOf(r *http.Request) Access {
	if r.URL.Path == "/metrics" {
		return AccessMetrics
	}
	return AccessQuery
}

// authorize asks az about the request's bearer token; a request without
// one, or with more than one Authorization header (which one counts is
// not for the server to guess), is refused before az is asked.
func authorize(r *http.Request, az Authorizer, access Access) error {
	if n := len(r.Header.Values("Authorization")); n > 1 {
		return unauthenticated(fmt.Sprintf("the request has %d Authorization headers: send one Authorization header, \"Authorization: Bearer TOKEN\"", n))
	}
	token, ok := bearerToken(r)
	if !ok {
		return missingToken
	}
	return az.Authorize(r.Context(), token, access)
}

// bearerToken returns the token of an "Authorization: Bearer" header
// (the scheme in any case), and whether there was a non-empty one.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// outcomeOf is the outcome label of an Authorize result.
func outcomeOf(err error) string {
	var ae *AuthError
	switch {
	case err == nil:
		return outcomeAllowed
	case errors.As(err, &ae):
		return ae.Outcome
	default:
		return outcomeError
	}
}

// refuse answers a refused request in the server's JSON error shape: 401
// with a WWW-Authenticate challenge, 403, or 503 when the token could not
// be checked (the error's text is not shown: it may come from the API
// server).
func refuse(w http.ResponseWriter, err error) {
	var ae *AuthError
	if !errors.As(err, &ae) {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "cannot check the bearer token right now; retry")
		return
	}
	if ae.Code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="parentrag"`)
	}
	writeError(w, ae.Code, ae.Message)
}

// authOutcomes registers, or finds, parentrag_auth_requests_total in reg.
func authOutcomes(reg *prometheus.Registry) *prometheus.CounterVec {
	return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parentrag_auth_requests_total",
		Help: "Requests to guarded endpoints by auth mode, access (query or metrics) and outcome: allowed, missing_token and invalid_token (401), forbidden (403), error (503: the token could not be checked).",
	}, []string{"mode", "access", "outcome"}))
}
