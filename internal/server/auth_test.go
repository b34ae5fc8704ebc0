package server

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// authRequest sends a request with token as its bearer token ("" sends
// no Authorization header) and returns the response, its body read.
func authRequest(t testing.TB, c *http.Client, method, url, token, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	return doRequest(t, c, req)
}

// secretVolume writes tokens into dir laid out as the kubelet mounts a
// Secret: each key a link through ..data to a timestamped directory, which
// a rotation replaces by swapping the ..data link.
func secretVolume(t *testing.T, dir string, tokens map[string]string) {
	t.Helper()
	version, err := os.MkdirTemp(dir, "..version-")
	if err != nil {
		t.Fatal(err)
	}
	for key, token := range tokens {
		if err := os.WriteFile(filepath.Join(version, key), []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, key)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", key), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(version), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// authStatus is one row of an auth matrix: a token kind sent to an
// endpoint and the status code it must get.
type authStatus struct {
	token, method, path, body string
	code                      int
}

// checkMatrix sends every row to ts and fails on a status code other
// than the row's. A 401 must carry a Bearer challenge and every refusal
// an ErrorResponse body.
func checkMatrix(t *testing.T, c *http.Client, base string, rows []authStatus, kinds map[string]string) {
	t.Helper()
	for _, row := range rows {
		resp, body := authRequest(t, c, row.method, base+row.path, kinds[row.token], row.body)
		if resp.StatusCode != row.code {
			t.Errorf("%s token, %s %s: %d %s, want %d", row.token, row.method, row.path, resp.StatusCode, body, row.code)
			continue
		}
		if row.code == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s token, %s %s: 401 without a Bearer challenge: %q", row.token, row.method, row.path, resp.Header.Get("WWW-Authenticate"))
		}
		if row.code == http.StatusUnauthorized || row.code == http.StatusForbidden {
			var e ErrorResponse
			decodeStrict(t, body, &e)
			if e.Error == "" || strings.Contains(e.Error, kinds[row.token]) && kinds[row.token] != "" {
				t.Errorf("%s token, %s %s: error body %q is empty or shows the token", row.token, row.method, row.path, e.Error)
			}
		}
	}
}

func TestBearerTokensGuardEveryEndpointButProbes(t *testing.T) {
	dir := t.TempDir()
	secretVolume(t, dir, map[string]string{"app": "token-of-app", "ci": "token-of-ci"})
	tokens, err := NewTokenDir(dir, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	s := New(Options{Auth: tokens, Registry: reg})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)
	rows := matrix([]callerCodes{
		{"no token", [5]int{401, 401, 200, 200, 401}},
		{"a token not in the Secret", [5]int{401, 401, 200, 200, 401}},
		{"the token of key app", [5]int{200, 200, 200, 200, 404}},
		{"the token of key ci", [5]int{200, 200, 200, 200, 404}},
	})
	kinds := map[string]string{"a token not in the Secret": "token-of-someone", "the token of key app": "token-of-app", "the token of key ci": "token-of-ci"}
	checkMatrix(t, ts.Client(), ts.URL, rows, kinds)
	t.Log("auth matrix, mode BearerToken:\n" + matrixTable(rows))

	counted := map[string]float64{"allowed": 6, "missing_token": 3, "invalid_token": 3}
	for outcome, want := range counted {
		var got float64
		for _, access := range []Access{AccessQuery, AccessMetrics} {
			got += testutil.ToFloat64(authOutcomes(reg).WithLabelValues("bearer", string(access), outcome))
		}
		if got != want {
			t.Errorf("parentrag_auth_requests_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
}

func TestBearerSchemeAndHeaderShapes(t *testing.T) {
	for _, tc := range []struct {
		header string
		token  string
		ok     bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"Bearer  abc ", "abc", true},
		{"Basic abc", "", false},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"abc", "", false},
		{"", "", false},
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", tc.header)
		token, ok := bearerToken(r)
		if token != tc.token || ok != tc.ok {
			t.Errorf("Authorization %q: token %q ok %v, want %q %v", tc.header, token, ok, tc.token, tc.ok)
		}
	}
}

func TestTokenDirPicksUpARotatedSecret(t *testing.T) {
	dir := t.TempDir()
	secretVolume(t, dir, map[string]string{"token": "old-token"})
	now := time.Now()
	tokens, err := NewTokenDir(dir, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	tokens.now = func() time.Time { return now }
	allowed := func(token string) bool { return tokens.Authorize(t.Context(), token, AccessQuery) == nil }
	if !allowed("old-token") || allowed("new-token") {
		t.Fatal("before the rotation only the old token is accepted")
	}
	secretVolume(t, dir, map[string]string{"token": "new-token"})
	now = now.Add(5 * time.Second)
	if !allowed("old-token") {
		t.Fatal("within the reload interval the directory is not reread")
	}
	now = now.Add(6 * time.Second)
	if allowed("old-token") || !allowed("new-token") {
		t.Fatal("past the reload interval the rotated token replaces the old one")
	}

	// A directory gone (or unreadable) keeps the tokens read last.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	now = now.Add(11 * time.Second)
	if !allowed("new-token") {
		t.Fatal("a failed reread dropped the tokens in force")
	}
}

func TestTokenDirRefusesWhatHoldsNoToken(t *testing.T) {
	empty := t.TempDir()
	blank := t.TempDir()
	if err := os.WriteFile(filepath.Join(blank, "token"), []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := t.TempDir()
	if err := os.WriteFile(filepath.Join(big, "token"), bytes.Repeat([]byte("x"), maxTokenFileBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ dir, want string }{
		"missing":   {filepath.Join(empty, "nothing"), "no such file"},
		"empty":     {empty, "holds no token"},
		"blank":     {blank, "holds no token"},
		"too large": {big, "one token a file"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewTokenDir(tc.dir, 0, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewTokenDir(%s) = %v, want an error that says %q", tc.dir, err, tc.want)
			}
		})
	}
}

func TestNoAuthorizerLeavesEveryEndpointOpen(t *testing.T) {
	s := New(Options{Registry: prometheus.NewRegistry()})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)
	rows := matrix([]callerCodes{{"no token", [5]int{200, 200, 200, 200, 404}}})
	checkMatrix(t, ts.Client(), ts.URL, rows, nil)
	t.Log("auth matrix, mode None:\n" + matrixTable(rows))
}

// matrixEndpoints are the columns of an auth matrix: a query, /metrics,
// the probes, and a path no handler serves.
var matrixEndpoints = [5]struct{ method, path, body string }{
	{"POST", "/v1/retrieve", `{"query": "tomatoes"}`}, {"GET", "/metrics", ""},
	{"GET", "/healthz", ""}, {"GET", "/readyz", ""}, {"GET", "/v1/other", ""},
}

// callerCodes are the status codes one kind of caller gets from the
// matrixEndpoints, in order.
type callerCodes struct {
	caller string
	codes  [5]int
}

// matrix expands callers into the rows of an auth matrix.
func matrix(callers []callerCodes) []authStatus {
	var rows []authStatus
	for _, c := range callers {
		for i, e := range matrixEndpoints {
			rows = append(rows, authStatus{c.caller, e.method, e.path, e.body, c.codes[i]})
		}
	}
	return rows
}

// matrixTable renders rows as a Markdown table: a line per caller, a
// column per endpoint.
func matrixTable(rows []authStatus) string {
	var b strings.Builder
	var endpoints []string
	seen := map[string]bool{}
	for _, r := range rows {
		if e := r.method + " " + r.path; !seen[e] {
			seen[e] = true
			endpoints = append(endpoints, e)
		}
	}
	fmt.Fprintf(&b, "| caller | %s |\n|---|%s\n", strings.Join(endpoints, " | "), strings.Repeat("---|", len(endpoints)))
	for i := 0; i+len(endpoints) <= len(rows); i += len(endpoints) {
		fmt.Fprintf(&b, "| %s |", rows[i].token)
		for _, r := range rows[i : i+len(endpoints)] {
			fmt.Fprintf(&b, " %d |", r.code)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// A request carrying two Authorization headers is refused, whatever the
// first holds: which one counts is not for the server to guess.
func TestTwoAuthorizationHeadersRefused(t *testing.T) {
	dir := t.TempDir()
	secretVolume(t, dir, map[string]string{"app": "token-of-app"})
	tokens, err := NewTokenDir(dir, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Auth: tokens, ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)
	for _, second := range []string{"Bearer token-of-app", "Bearer someone-else", "Basic YTpi"} {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/retrieve", strings.NewReader(`{"query": "tomatoes"}`))
		req.Header.Add("Authorization", "Bearer token-of-app")
		req.Header.Add("Authorization", second)
		resp, data := doRequest(t, ts.Client(), req)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(errorMessage(data), "send one Authorization header") {
			t.Errorf("Authorization twice (then %q): %d %s, want 401 asking for one header", second, resp.StatusCode, data)
		}
	}
}
