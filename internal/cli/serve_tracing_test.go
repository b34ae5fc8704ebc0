package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/rerank/reranktest"
	"github.com/parentrag/parentrag/internal/server"
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
	spansFile, endpoint := startCollector(t)
	tei := reranktest.NewTEI("zebra")
	defer tei.Close()
	slow := slowProxy(t, tei.URL, rerankDelay)
	rs := startServe(t, nil, "--index", localIndex(t), "--corpus", "notes", "--rerank-url", slow.URL, "--otlp-endpoint", endpoint)
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

	spans := readSpans(t, spansFile, traces)
	for i, c := range calls {
		srv := findSpan(spans, traces[i], "POST "+routeOf(c.path))
		if srv == nil {
			t.Fatalf("no server span of trace %s for %s in %d spans", traces[i], c.path, len(spans))
		}
		if want := fmt.Sprintf("%016x", 0x1020304050600000+i); srv.ParentSpanID != want {
			t.Errorf("%s: server span's parent %s, want the traceparent's %s", c.path, srv.ParentSpanID, want)
		}
	}
	root := findSpan(spans, traces[0], "POST /v1/retrieve")
	for _, s := range spans {
		if s.TraceID == traces[0] {
			t.Logf("span %-24s %8s  id %s parent %s", s.Name, s.duration().Round(time.Microsecond), s.SpanID, s.ParentSpanID)
		}
	}
	for _, name := range []string{"parentrag.admission", "parentrag.analyze", "parentrag.embed_query", "parentrag.child_search", "parentrag.parent_fetch", "parentrag.rerank", "parentrag.budget"} {
		s := findSpan(spans, traces[0], name)
		if s == nil {
			t.Errorf("no %s span in the /v1/retrieve trace", name)
			continue
		}
		if !descends(spans, s, root) {
			t.Errorf("%s is not under the server span", name)
		}
	}
	if r := findSpan(spans, traces[0], "parentrag.rerank"); r != nil && r.duration() < rerankDelay {
		t.Errorf("the rerank span lasted %s, less than the reranker's %s", r.duration(), rerankDelay)
	}
	if r := findSpan(spans, traces[0], "parentrag.rerank"); r != nil && root != nil && root.duration() < r.duration() {
		t.Errorf("the server span (%s) is shorter than its rerank span (%s)", root.duration(), r.duration())
	}
}

// routeOf is the endpoint name the server gives a request path.
func routeOf(path string) string {
	if strings.HasPrefix(path, "/v1/vector_stores/") {
		return server.VectorStoreSearchPath
	}
	return path
}

// startCollector starts hack/otelcol's collector ($PARENTRAG_OTELCOL) with
// an OTLP/HTTP receiver on a free port and the file exporter, and returns
// the file it writes and the endpoint to send to. Without the collector
// the test is skipped, and fails under CI=true.
func startCollector(t *testing.T) (string, string) {
	t.Helper()
	bin := os.Getenv("PARENTRAG_OTELCOL")
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("PARENTRAG_OTELCOL is not set: make test-tracing builds the collector (hack/otelcol.sh)")
		}
		t.Skip("PARENTRAG_OTELCOL is not set: make test-tracing builds the collector (hack/otelcol.sh) and runs this test")
	}
	dir := t.TempDir()
	port := freePort(t)
	out := filepath.Join(dir, "spans.json")
	config := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  file:
    path: %s
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`, port, out)
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return out, "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector does not listen on %s after 30s:\n%s", addr, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a TCP port free on the loopback interface.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
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

// span is what the test reads of an exported span (OTLP JSON).
type span struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
	Start        string `json:"startTimeUnixNano"`
	End          string `json:"endTimeUnixNano"`
	Attributes   []struct {
		Key   string `json:"key"`
		Value struct {
			String string `json:"stringValue"`
			Int    string `json:"intValue"` // OTLP JSON writes 64-bit integers as strings
		} `json:"value"`
	} `json:"attributes"`
}

// attr is the value of the span's attribute key, a string or an integer
// written in decimal; "" when it has none.
func (s *span) attr(key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.String + a.Value.Int
		}
	}
	return ""
}

// duration is how long the span lasted.
func (s *span) duration() time.Duration {
	start, _ := strconv.ParseInt(s.Start, 10, 64)
	end, _ := strconv.ParseInt(s.End, 10, 64)
	return time.Duration(end - start)
}

// readSpans reads the collector's file until it holds a span of every
// trace (at most 30 seconds), and returns its spans.
func readSpans(t *testing.T, file string, traces []string) []span {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans := parseSpans(t, file)
		seen := map[string]bool{}
		for _, s := range spans {
			seen[s.TraceID] = true
		}
		all := true
		for _, tr := range traces {
			all = all && seen[tr]
		}
		if all {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s the collector holds %d spans, not every trace of %v", len(spans), traces)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// parseSpans reads the file exporter's lines of OTLP JSON.
func parseSpans(t *testing.T, file string) []span {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []span
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var batch struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []span `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal(sc.Bytes(), &batch); err != nil {
			continue // a line being written
		}
		for _, rs := range batch.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				out = append(out, ss.Spans...)
			}
		}
	}
	return out
}

// findSpan returns the span of trace named name, or nil.
func findSpan(spans []span, trace, name string) *span {
	for i := range spans {
		if spans[i].TraceID == trace && spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

// descends reports whether s is root or below it.
func descends(spans []span, s, root *span) bool {
	for hops := 0; s != nil && hops < 20; hops++ {
		if root != nil && s.SpanID == root.SpanID {
			return true
		}
		var parent *span
		for i := range spans {
			if spans[i].TraceID == s.TraceID && spans[i].SpanID == s.ParentSpanID {
				parent = &spans[i]
			}
		}
		s = parent
	}
	return false
}
