package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parentrag/parentrag/internal/inspector"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
)

// sectionsPolicy cuts Markdown at its headings, so parents carry heading
// paths.
const sectionsPolicy = `spec:
  separators: {preset: Markdown}
  parent: {chunkSize: 200, boundaries: Sections}
  child: {chunkSize: 60, chunkOverlap: 10}
`

// previewBody is the JSON of a preview request.
func previewBody(t testing.TB, name, doc string, policies ...string) string {
	t.Helper()
	data, err := json.Marshal(inspector.PreviewRequest{Name: name, Document: doc, Policies: policies})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// newInspectorServer serves a real index of the test corpus with the
// inspector enabled and opts' other settings.
func newInspectorServer(t *testing.T, opts Options) (*Server, string, *http.Client) {
	t.Helper()
	opts.Inspector.Enabled = true
	opts.ShutdownDelay = -1
	s := New(opts)
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)
	return s, ts.URL, ts.Client()
}

func TestInspectorIsOffByDefault(t *testing.T) {
	ts := newTestServer(t, New(Options{ShutdownDelay: -1}))
	for _, r := range []struct{ method, path, body string }{
		{"GET", inspector.Prefix, ""}, {"GET", inspector.Prefix + "app.js", ""},
		{"POST", inspector.PreviewPath, previewBody(t, "", "text", "")},
	} {
		if code, body := do(t, ts.Client(), r.method, ts.URL+r.path, r.body); code != http.StatusNotFound {
			t.Errorf("%s %s with the inspector off: %d %s, want 404", r.method, r.path, code, body)
		}
	}
}

// TestInspectorServesItsPage checks that every file of the page is served
// with its type and a Content-Security-Policy that runs only its own
// scripts, that the folder without its slash leads to the page, and that
// the page is only read.
func TestInspectorServesItsPage(t *testing.T) {
	_, url, c := newInspectorServer(t, Options{})
	wantType := map[string]string{".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
	paths := inspector.PagePaths()
	if len(paths) < 5 {
		t.Fatalf("page paths %v: want the page, its scripts and its styles", paths)
	}
	for _, p := range paths {
		resp, body := doRequest(t, c, mustRequest(t, "GET", url+p))
		ext := path.Ext(p)
		if p == inspector.Prefix {
			ext = ".html"
		}
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), wantType[ext]) || len(body) == 0 {
			t.Errorf("GET %s: %d %s, %d bytes; want 200 %s", p, resp.StatusCode, resp.Header.Get("Content-Type"), len(body), wantType[ext])
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", p, csp)
		}
	}
	noRedirect := *c
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, _ := doRequest(t, &noRedirect, mustRequest(t, "GET", url+"/inspector"))
	if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != inspector.Prefix {
		t.Errorf("GET /inspector: %d to %q, want a redirect to %s", resp.StatusCode, resp.Header.Get("Location"), inspector.Prefix)
	}
	if code, _ := do(t, c, "POST", url+inspector.Prefix, "x"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST %s: %d, want 405", inspector.Prefix, code)
	}
	if code, _ := do(t, c, "GET", url+inspector.PreviewPath, ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %d, want 405", inspector.PreviewPath, code)
	}
}

func mustRequest(t testing.TB, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestInspectorIsBehindTheQueryAuth checks, on a server with bearer
// tokens, that the page's files open without a token while the preview
// and the query the page sends are refused without the token the query
// API takes, and answered with it; a path under the page that is not one
// of its files is not open.
func TestInspectorIsBehindTheQueryAuth(t *testing.T) {
	dir := t.TempDir()
	secretVolume(t, dir, map[string]string{"app": "token-of-app"})
	tokens, err := NewTokenDir(dir, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, url, c := newInspectorServer(t, Options{Auth: tokens, Registry: prometheus.NewRegistry()})
	for _, p := range inspector.PagePaths() {
		if resp, body := authRequest(t, c, "GET", url+p, "", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without a token: %d %s, want 200", p, resp.StatusCode, body)
		}
	}
	preview := previewBody(t, "notes.md", "# Notes\n\nA short note about tomatoes.", "")
	for _, r := range []struct{ method, path, body string }{
		{"POST", inspector.PreviewPath, preview},
		{"POST", "/v1/retrieve", `{"query": "tomatoes"}`},
		{"GET", inspector.Prefix + "secrets", ""},
	} {
		for token, want := range map[string]int{"": 401, "token-of-someone": 401} {
			resp, body := authRequest(t, c, r.method, url+r.path, token, r.body)
			if resp.StatusCode != want || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with token %q: %d %s, want %d with a challenge", r.method, r.path, token, resp.StatusCode, body, want)
			}
		}
	}
	if resp, body := authRequest(t, c, "POST", url+inspector.PreviewPath, "token-of-app", preview); resp.StatusCode != http.StatusOK {
		t.Errorf("preview with the token: %d %s, want 200", resp.StatusCode, body)
	}
}

// TestPreviewDrawsEachPolicysCut previews the handbook with two policies
// and checks each layout against the policy's own split: the same
// parents and children, at offsets that hold their text, each child
// inside its parent, sizes in the policy's unit, heading paths from the
// sections policy.
func TestPreviewDrawsEachPolicysCut(t *testing.T) {
	_, url, c := newInspectorServer(t, Options{})
	doc := bundletest.Handbook()
	code, body := do(t, c, "POST", url+inspector.PreviewPath, previewBody(t, doc.ID, doc.Text, "", sectionsPolicy))
	if code != http.StatusOK {
		t.Fatalf("preview: %d %s", code, body)
	}
	var got inspector.Preview
	decodeStrict(t, body, &got)
	if got.Name != doc.ID || got.Format != "Markdown" || got.Text != doc.Text || got.Length != len([]rune(doc.Text)) || len(got.Layouts) != 2 {
		t.Fatalf("preview of %s: name %q format %q length %d, %d layouts", doc.ID, got.Name, got.Format, got.Length, len(got.Layouts))
	}
	runes := []rune(doc.Text)
	for i, policyText := range []string{"", sectionsPolicy} {
		compiled, err := inspector.CompilePolicy(policyText)
		if err != nil {
			t.Fatal(err)
		}
		want := compiled.Builder.Build(doc)
		l := got.Layouts[i]
		if len(l.Parents) != len(want.Parents) || len(l.Children) != len(want.Children) {
			t.Fatalf("layout %d: %d parents and %d children, the policy makes %d and %d", i, len(l.Parents), len(l.Children), len(want.Parents), len(want.Children))
		}
		for j, p := range l.Parents {
			if string(runes[p.Start:p.End]) != want.Parents[j].Text || p.Length != len([]rune(want.Parents[j].Text)) {
				t.Errorf("layout %d parent %d at [%d, %d) of length %d does not hold its text %q", i, j, p.Start, p.End, p.Length, want.Parents[j].Text)
			}
		}
		for j, ch := range l.Children {
			parent := l.Parents[ch.Parent]
			if string(runes[ch.Start:ch.End]) != want.Children[j].Text || ch.Start < parent.Start || ch.End > parent.End {
				t.Errorf("layout %d child %d at [%d, %d) in parent [%d, %d) does not hold its text %q", i, j, ch.Start, ch.End, parent.Start, parent.End, want.Children[j].Text)
			}
		}
	}
	if l := got.Layouts[1]; len(l.Parents) < 2 || strings.Join(l.Parents[1].HeadingPath, " > ") != "Travel handbook > Hotels" {
		t.Errorf("sections policy: parents %+v, want the second under Travel handbook > Hotels", l.Parents)
	}
}

// TestPreviewRefusesWhatItCannotCut sends previews too large, malformed
// or cut too finely, and checks each is refused with a status and a
// message that says what to change.
func TestPreviewRefusesWhatItCannotCut(t *testing.T) {
	_, url, c := newInspectorServer(t, Options{Inspector: InspectorOptions{MaxBodyBytes: 128 << 10, MaxDocumentBytes: 4 << 10, MaxUnits: 50}})
	prose := strings.Repeat("The harbor master assigns moorings to the boats. ", 60) // about 3 KB
	cases := []struct {
		name, body string
		code       int
		errPart    string
	}{
		{"body over the limit", previewBody(t, "", strings.Repeat("x", 130<<10), ""), 413, "request body over 131072 bytes"},
		{"document over the limit", previewBody(t, "", strings.Repeat("word ", 1000), ""), 413, "document of 5000 bytes is over the preview's limit of 4096 bytes"},
		{"policy over the limit", previewBody(t, "", prose, "# "+strings.Repeat("x", 65<<10)), 413, "policy A of"},
		{"too fine a cut", previewBody(t, "", prose, "spec: {parent: {chunkSize: 40}, child: {chunkSize: 10}}"), 400, "more than the 50 the preview draws"},
		{"three policies", previewBody(t, "", prose, "", "", ""), 400, "want one or two ChunkingPolicies, got 3"},
		{"no policy", previewBody(t, "", prose), 400, "got 0"},
		{"bad policy", previewBody(t, "", prose, "", "spec: {child: {chunkSize: 2000}}"), 400, "policy B: invalid"},
		{"misspelt policy field", previewBody(t, "", prose, "spec: {parent: {chunksize: 900}}"), 400, "policy A"},
		{"no document", `{"policies": [""]}`, 400, "document is required"},
		{"blank document", previewBody(t, "", " \n\n ", ""), 400, "is empty"},
		{"a PDF", previewBody(t, "paper.pdf", "%PDF-1.7\n", ""), 400, "reads as PDF"},
		{"unknown field", `{"document": "x", "policies": [""], "policy": ""}`, 400, `unknown field "policy"`},
		{"not JSON", `document: x`, 400, "invalid request body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, c, "POST", url+inspector.PreviewPath, tc.body)
			var e ErrorResponse
			decodeStrict(t, body, &e)
			if code != tc.code || !strings.Contains(e.Error, tc.errPart) {
				t.Errorf("%d %q, want %d mentioning %q", code, e.Error, tc.code, tc.errPart)
			}
		})
	}
}

// TestPreviewsRunOneAtATime holds the preview slot and checks that one
// preview then waits for it while another is refused at once with 503
// and Retry-After, and that the waiting one is answered once the slot is
// given back.
func TestPreviewsRunOneAtATime(t *testing.T) {
	s, url, c := newInspectorServer(t, Options{})
	release, _ := s.previews.acquire(context.Background())
	if release == nil {
		t.Fatal("the preview slot is taken before any preview")
	}
	body := previewBody(t, "", "A note about tomatoes and basil.", "")
	waited := make(chan int, 1)
	go func() {
		code, _, err := send(c, "POST", url+inspector.PreviewPath, body)
		if err != nil {
			t.Error(err)
		}
		waited <- code
	}()
	for deadline := time.Now().Add(5 * time.Second); s.previews.queued.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second preview never waited for the slot")
		}
	}
	resp, refused := authRequest(t, c, "POST", url+inspector.PreviewPath, "", body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(refused), "one at a time") {
		t.Errorf("a third preview: %d %s (Retry-After %q), want 503 saying previews run one at a time", resp.StatusCode, refused, resp.Header.Get("Retry-After"))
	}
	release()
	if code := <-waited; code != http.StatusOK {
		t.Errorf("the waiting preview: %d, want 200 once the slot is free", code)
	}
}

// TestPreviewPastTheTimeoutKeepsItsSlot cuts a document finely enough to
// take longer than the request timeout, and checks that the request is
// answered 504 while the cut keeps the preview slot until it ends, so a
// timed-out preview still counts as the one running.
func TestPreviewPastTheTimeoutKeepsItsSlot(t *testing.T) {
	s, url, c := newInspectorServer(t, Options{RequestTimeout: 20 * time.Millisecond, Inspector: InspectorOptions{MaxDocumentBytes: 256 << 10}})
	doc := strings.Repeat("Sailing upwind means tacking across the wind. ", 5000) // about 230 KB: about a second
	code, body := do(t, c, "POST", url+inspector.PreviewPath, previewBody(t, "sailing.txt", doc, "spec: {parent: {chunkSize: 4}, child: {chunkSize: 2}}"))
	if code != http.StatusGatewayTimeout || !strings.Contains(string(body), "took longer than 20ms") {
		t.Fatalf("a slow preview: %d %s, want 504", code, body)
	}
	if len(s.previews.slots) != 1 {
		t.Errorf("the preview slot was given back while the cut still runs")
	}
	for deadline := time.Now().Add(time.Minute); len(s.previews.slots) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cut never gave the preview slot back")
		}
	}
}

// FuzzPreviewRequest previews arbitrary documents with arbitrary
// policies: the server never panics, answers only 200, 400, 413, 503 or
// 504, every refusal is a JSON error with a message, and every layout it
// draws lies within the document, each child inside its parent.
func FuzzPreviewRequest(f *testing.F) {
	for _, seed := range [][2]string{
		{"# Title\n\nSome text. More text.", ""},
		{"# A\n\n## B\n\ntext under b", sectionsPolicy},
		{"one. two. three. four.", "spec: {strategy: SentenceWindow, window: {sentences: 1}}"},
		{"<html><body><p>hi</p></body></html>", "spec: {lengthUnit: Tokens, parent: {chunkSize: 8}, child: {chunkSize: 2, chunkOverlap: 1}}"},
		{"a b c d e f g", "spec: {parent: {chunkSize: 2}, child: {chunkSize: 1}}"},
		{"", "spec: {child: {chunkSize: 0}}"},
	} {
		f.Add(seed[0], seed[1])
	}
	s := New(Options{ShutdownDelay: -1, Inspector: InspectorOptions{Enabled: true}})
	h := s.Handler()
	allowed := map[int]bool{http.StatusOK: true, http.StatusBadRequest: true, http.StatusRequestEntityTooLarge: true,
		http.StatusServiceUnavailable: true, http.StatusGatewayTimeout: true}
	f.Fuzz(func(t *testing.T, doc, policy string) {
		body := previewBody(t, "", doc, policy)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, inspector.PreviewPath, strings.NewReader(body)))
		if !allowed[rec.Code] {
			t.Fatalf("document %q, policy %q: status %d: %s", doc, policy, rec.Code, rec.Body)
		}
		if rec.Code != http.StatusOK {
			var e ErrorResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("document %q, policy %q: %d without a JSON error: %q", doc, policy, rec.Code, rec.Body)
			}
			return
		}
		var p inspector.Preview
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || len(p.Layouts) != 1 {
			t.Fatalf("document %q, policy %q: 200 with %q (%v)", doc, policy, rec.Body, err)
		}
		checkLayout(t, p.Length, p.Layouts[0])
	})
}

// checkLayout fails unless every located unit of l lies within a text of
// length code points and every located child inside its located parent.
func checkLayout(t *testing.T, length int, l inspector.Layout) {
	t.Helper()
	inside := func(start, end, lo, hi int) bool { return start < 0 || lo <= start && start <= end && end <= hi }
	for i, p := range l.Parents {
		if !inside(p.Start, p.End, 0, length) {
			t.Fatalf("parent %d at [%d, %d) of a text of %d", i, p.Start, p.End, length)
		}
	}
	for i, c := range l.Children {
		if c.Parent < 0 || c.Parent >= len(l.Parents) {
			t.Fatalf("child %d of parent %d, of %d parents", i, c.Parent, len(l.Parents))
		}
		p := l.Parents[c.Parent]
		if p.Start >= 0 && !inside(c.Start, c.End, p.Start, p.End) {
			t.Fatalf("child %d at [%d, %d) outside its parent [%d, %d)", i, c.Start, c.End, p.Start, p.End)
		}
	}
}
