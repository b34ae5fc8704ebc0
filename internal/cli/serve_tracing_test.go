package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/rerank/reranktest"
	"github.com/parentrag/parentrag/internal/server"
	"github.com/parentrag/parentrag/internal/telemetry/otelcoltest"
)

// rerankDelay is how long the slow reranker of the tracing test waits.
const rerankDelay = 300 * time.Millisecond

// TestServeTracesToACollector runs parentrag serve with a reranker that
// answers after 300ms and --otlp-endpoint naming a real OpenTelemetry
// Collector (hack/otelcol, built from the collector's Go modules, writing
// what it receives to a file). A query to each protocol carries a W3C
// traceparent: each becomes a server span of that trace, the child of the
// caller's span, and the /v1/retrieve query has its stages as children,
// the rerank span lasting the reranker's delay.
func TestServeTracesToACollector(t *testing.T) {
	col := otelcoltest.Start(t, "127.0.0.1")
	tei := reranktest.NewTEI("zebra")
	defer tei.Close()
	slow := slowProxy(t, tei.URL, rerankDelay)
	rs := startServe(t, nil, "--index", localIndex(t), "--corpus", "notes", "--rerank-url", slow.URL, "--otlp-endpoint", col.Endpoint)
	rs.waitReady(t)

	calls := []struct{ path, body string }{
		{"/v1/retrieve", `{"query":"How fast do zebras run?"}`},
		{server.LangChainPath, `{"message":"How fast do zebras run?"}`},
		{"/v1/vector_stores/notes/search", `{"query":"How fast do zebras run?"}`},
		{server.MCPPath, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
	}
	traces := make([]string, len(calls))
	for i, c := range calls {
		traces[i] = fmt.Sprintf("%032x", 0x21b2c3d4e5f60000+i)
		parent := fmt.Sprintf("%016x", 0x1020304050600000+i)
		postTraced(t, rs.url+c.path, c.body, "00-"+traces[i]+"-"+parent+"-01")
	}
	if err := rs.stop(t); err != nil {
		t.Fatal(err)
	}

	spans := col.AwaitTraces(t, traces)
	for i, c := range calls {
		srv := otelcoltest.Find(spans, traces[i], "POST "+routeOf(c.path))
		if srv == nil {
			t.Fatalf("no server span of trace %s for %s in %d spans", traces[i], c.path, len(spans))
		}
		if want := fmt.Sprintf("%016x", 0x1020304050600000+i); srv.ParentSpanID != want {
			t.Errorf("%s: server span's parent %s, want the traceparent's %s", c.path, srv.ParentSpanID, want)
		}
	}
	root := otelcoltest.Find(spans, traces[0], "POST /v1/retrieve")
	for _, s := range spans {
		if s.TraceID == traces[0] {
			t.Logf("span %-24s %8s  id %s parent %s", s.Name, s.Duration().Round(time.Microsecond), s.SpanID, s.ParentSpanID)
		}
	}
	for _, name := range []string{"parentrag.admission", "parentrag.analyze", "parentrag.embed_query", "parentrag.child_search", "parentrag.parent_fetch", "parentrag.rerank", "parentrag.budget"} {
		s := otelcoltest.Find(spans, traces[0], name)
		if s == nil {
			t.Errorf("no %s span in the /v1/retrieve trace", name)
			continue
		}
		if !otelcoltest.Descends(spans, s, root) {
			t.Errorf("%s is not under the server span", name)
		}
	}
	if r := otelcoltest.Find(spans, traces[0], "parentrag.rerank"); r != nil && r.Duration() < rerankDelay {
		t.Errorf("the rerank span lasted %s, less than the reranker's %s", r.Duration(), rerankDelay)
	}
	if r := otelcoltest.Find(spans, traces[0], "parentrag.rerank"); r != nil && root != nil && root.Duration() < r.Duration() {
		t.Errorf("the server span (%s) is shorter than its rerank span (%s)", root.Duration(), r.Duration())
	}
}

// routeOf is the endpoint name the server gives a request path.
func routeOf(path string) string {
	if strings.HasPrefix(path, "/v1/vector_stores/") {
		return server.VectorStoreSearchPath
	}
	return path
}

// slowProxy answers every request as target does, after delay.
func slowProxy(t *testing.T, target string, delay time.Duration) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// postTraced posts body with a traceparent header and drains the answer.
func postTraced(t *testing.T, url, body, traceparent string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("traceparent", traceparent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d", url, resp.StatusCode)
	}
}
