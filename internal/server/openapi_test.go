package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	legacyrouter "github.com/getkin/kin-openapi/routers/legacy"
	"github.com/prometheus/client_golang/prometheus"
)

// openAPIRouter loads the server's OpenAPI document, validates it and
// returns a router over it.
func openAPIRouter(t testing.TB) routers.Router {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPIDocument())
	if err != nil {
		t.Fatalf("loading the OpenAPI document: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is invalid: %v", err)
	}
	router, err := legacyrouter.NewRouter(doc)
	if err != nil {
		t.Fatalf("routing the OpenAPI document: %v", err)
	}
	return router
}

// openAPIRecorder validates every request and answer that passes through
// it against the OpenAPI document: each answer must be documented for its
// operation and status and match its schema, and a request the document
// rules out must be refused with a 4xx. It records which operations and
// statuses were seen.
type openAPIRecorder struct {
	t      testing.TB
	router routers.Router
	mu     sync.Mutex
	seen   map[string]bool
}

// newValidatedServer serves s through an openAPIRecorder until the test
// ends.
func newValidatedServer(t *testing.T, s *Server) (*httptest.Server, *openAPIRecorder) {
	t.Helper()
	rec := &openAPIRecorder{t: t, router: openAPIRouter(t), seen: map[string]bool{}}
	ts := httptest.NewServer(rec.wrap(s.Handler()))
	t.Cleanup(ts.Close)
	return ts, rec
}

// wrap validates what h answers.
func (v *openAPIRecorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		v.check(r, body, rec)
		for k, vals := range rec.Header() {
			w.Header()[k] = vals
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// check validates one exchange.
func (v *openAPIRecorder) check(r *http.Request, body []byte, rec *httptest.ResponseRecorder) {
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
			v.t.Errorf("%s %s: not in the OpenAPI document (%v) yet answered %d", r.Method, r.URL.Path, err, rec.Code)
		}
		return
	}
	input := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: bearerPresent}}
	if err := openapi3filter.ValidateRequest(context.Background(), input); err != nil && (rec.Code < 400 || rec.Code >= 500) {
		v.t.Errorf("%s %s %s: the document refuses the request (%v) yet it was answered %d", r.Method, r.URL.Path, body, err, rec.Code)
	}
	resp := &openapi3filter.ResponseValidationInput{RequestValidationInput: input, Status: rec.Code,
		Header: rec.Header(), Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	if err := openapi3filter.ValidateResponse(context.Background(), resp); err != nil {
		v.t.Errorf("%s %s %s: answer %d %s does not match the document: %v", r.Method, r.URL.Path, body, rec.Code, rec.Body, err)
	}
	v.mu.Lock()
	v.seen[route.Method+" "+route.Path+" "+http.StatusText(rec.Code)] = true
	v.mu.Unlock()
}

// bearerPresent is the document's "bearer" scheme as a validator sees it:
// met by a request that carries a bearer token, whether or not the server
// accepts it (the document also allows no token, for a server without auth).
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecuritySchemeName == "bearer" && !strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
		return errors.New("no bearer token")
	}
	return nil
}

// saw returns the operations and statuses seen, sorted.
func (v *openAPIRecorder) saw() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for k := range v.seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestOpenAPIPublishedCopyIsServed(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	ts, _ := newValidatedServer(t, s)
	code, served := do(t, ts.Client(), "GET", ts.URL+OpenAPIPath, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", OpenAPIPath, code)
	}
	published, err := os.ReadFile(filepath.Join("..", "..", "docs", "api", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(published, served) {
		t.Errorf("docs/api/openapi.json differs from what %s serves: run go run ./hack/openapi docs/api/openapi.json", OpenAPIPath)
	}
}

// TestEveryEndpointMatchesOpenAPI sends real requests, good and bad, to
// every endpoint of a server with a real index and validates each request
// and answer against the document; every operation must be reached.
func TestEveryEndpointMatchesOpenAPI(t *testing.T) {
	s := New(Options{ShutdownDelay: -1, Corpus: "docs", MaxBodyBytes: 2048})
	ts, rec := newValidatedServer(t, s)
	c := ts.Client()
	// Before a bundle is loaded.
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/readyz", ""}, {"POST", "/v1/retrieve", `{"query": "x"}`},
		{"POST", LangChainPath, `{"message": "x"}`}, {"GET", VectorStoresPath, ""},
	} {
		if code, body := doJSON(t, c, r.method, ts.URL+r.path, r.body); code != http.StatusServiceUnavailable {
			t.Errorf("%s %s before load: %d %s, want 503", r.method, r.path, code, body)
		}
	}
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	big := `{"query": "` + strings.Repeat("word ", 500) + `"}`
	for _, r := range []struct {
		method, path, body string
		code               int
	}{
		{"GET", "/healthz", "", 200}, {"POST", "/healthz", "", 405},
		{"GET", "/readyz", "", 200}, {"PUT", "/readyz", "", 405},
		{"GET", "/metrics", "", 200}, {"GET", OpenAPIPath, "", 200}, {"POST", OpenAPIPath, "", 405},
		{"POST", "/v1/retrieve", `{"query": "tomatoes", "maxParents": 2}`, 200},
		{"POST", "/v1/retrieve", `{"query": "x", "maxParents": 0}`, 400},
		{"POST", "/v1/retrieve", big, 413}, {"GET", "/v1/retrieve", "", 405},
		{"POST", LangChainPath, `{"message": "tomatoes"}`, 200},
		{"POST", LangChainPath, `{"message": "x", "Message": "y"}`, 400},
		{"POST", LangChainPath, `{"query": "x"}`, 400},
		{"POST", LangChainPath, big, 413}, {"GET", LangChainPath, "", 405},
		{"GET", VectorStoresPath, "", 200}, {"POST", VectorStoresPath, "", 405},
		{"GET", "/v1/vector_stores/docs", "", 200}, {"GET", "/v1/vector_stores/other", "", 404},
		{"DELETE", "/v1/vector_stores/docs", "", 405},
		{"POST", "/v1/vector_stores/docs/search", `{"query": "tomatoes", "max_num_results": 2}`, 200},
		{"POST", "/v1/vector_stores/docs/search", `{"query": ["rollback", "revision"], "filters": {"type": "eq", "key": "team", "value": "search"}, "ranking_options": {"ranker": "auto", "score_threshold": 0}, "rewrite_query": false}`, 200},
		{"POST", "/v1/vector_stores/docs/search", `{"query": "x", "filters": {"type": "or", "filters": []}}`, 400},
		{"POST", "/v1/vector_stores/docs/search", `{"query": "x", "max_num_results": 51}`, 400},
		{"POST", "/v1/vector_stores/other/search", `{"query": "x"}`, 404},
		{"POST", "/v1/vector_stores/docs/search", big, 413}, {"GET", "/v1/vector_stores/docs/search", "", 405},
		{"POST", MCPPath, `{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}`, 200},
		{"GET", MCPPath, "", 405},
	} {
		code, body := doJSON(t, c, r.method, ts.URL+r.path, r.body)
		if code != r.code {
			t.Errorf("%s %s %.80s: %d %s, want %d", r.method, r.path, r.body, code, body, r.code)
		}
	}
	if !t.Failed() {
		assertEveryOperationSeen(t, rec)
	}
}

// assertEveryOperationSeen fails unless each operation of the document
// was answered at least once.
func assertEveryOperationSeen(t *testing.T, rec *openAPIRecorder) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	seen := strings.Join(rec.saw(), "\n")
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !strings.Contains(seen, method+" "+path+" ") {
				t.Errorf("%s %s was never exercised; seen:\n%s", method, path, seen)
			}
		}
	}
}

// doJSON is do with the headers a JSON client sends: Content-Type with a
// body, and an Accept that MCP's Streamable HTTP transport requires.
func doJSON(t testing.TB, c *http.Client, method, url, body string) (int, []byte) {
	t.Helper()
	resp, data := authRequest(t, c, method, url, "", body)
	return resp.StatusCode, data
}

// TestGuardedAnswersMatchOpenAPI checks, through the validator, that on a
// server with bearer tokens every endpoint but the probes answers 401 as
// the document describes it when no token or a wrong one comes, and that
// the accepted token reaches each endpoint.
func TestGuardedAnswersMatchOpenAPI(t *testing.T) {
	dir := t.TempDir()
	secretVolume(t, dir, map[string]string{"app": "token-of-app"})
	tokens, err := NewTokenDir(dir, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{ShutdownDelay: -1, Corpus: "docs", Auth: tokens, Registry: prometheus.NewRegistry()})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, rec := newValidatedServer(t, s)
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/retrieve", `{"query": "tomatoes"}`},
		{"POST", LangChainPath, `{"message": "tomatoes"}`},
		{"GET", VectorStoresPath, ""},
		{"GET", "/v1/vector_stores/docs", ""},
		{"POST", "/v1/vector_stores/docs/search", `{"query": "tomatoes"}`},
		{"POST", MCPPath, `{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}`},
		{"GET", "/metrics", ""},
		{"GET", OpenAPIPath, ""},
	} {
		for token, want := range map[string]int{"": 401, "token-of-someone": 401, "token-of-app": 200} {
			resp, body := authRequest(t, ts.Client(), r.method, ts.URL+r.path, token, r.body)
			if resp.StatusCode != want {
				t.Errorf("%s %s with token %q: %d %s, want %d", r.method, r.path, token, resp.StatusCode, body, want)
			}
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp, body := authRequest(t, ts.Client(), "GET", ts.URL+path, "", ""); resp.StatusCode != 200 {
			t.Errorf("GET %s without a token: %d %s, want 200", path, resp.StatusCode, body)
		}
	}
	if saw := strings.Join(rec.saw(), "\n"); !strings.Contains(saw, "POST /mcp Unauthorized") || !strings.Contains(saw, "GET /metrics Unauthorized") {
		t.Errorf("the validator saw no 401 of /mcp or /metrics:\n%s", saw)
	}
}
