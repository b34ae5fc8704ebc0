// Package otelcoltest runs the OpenTelemetry Collector that hack/otelcol.sh
// builds ($PARENTRAG_OTELCOL) for tests: an OTLP/HTTP receiver on an
// address the test chooses and a file exporter, and reads back the spans
// it received.
package otelcoltest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// EnvBinary names the variable holding the collector's path.
const EnvBinary = "PARENTRAG_OTELCOL"

// Collector is a running collector.
type Collector struct {
	// Endpoint is its OTLP/HTTP address, http://host:port.
	Endpoint string
	spans    string
}

// Start runs the collector with its receiver on a free port of host
// ("127.0.0.1" for a test's own processes, an address pods reach for a
// cluster) until the test ends. Without $PARENTRAG_OTELCOL the test fails
// under CI=true and is skipped otherwise.
func Start(t testing.TB, host string) *Collector {
	t.Helper()
	bin := os.Getenv(EnvBinary)
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: make test-tracing builds the collector (hack/otelcol.sh)", EnvBinary)
		}
		t.Skipf("%s is not set: make test-tracing builds the collector (hack/otelcol.sh) and runs this test", EnvBinary)
	}
	dir := t.TempDir()
	addr := net.JoinHostPort(host, strconv.Itoa(freePort(t, host)))
	c := &Collector{Endpoint: "http://" + addr, spans: filepath.Join(dir, "spans.json")}
	config := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
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
`, addr, c.spans)
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector does not listen on %s after 30s:\n%s", addr, logs)
		}
	}
}

// Span is what a test reads of an exported span (OTLP JSON).
type Span struct {
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

// Attr is the value of the span's attribute key, a string or an integer
// written in decimal; "" when it has none.
func (s *Span) Attr(key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.String + a.Value.Int
		}
	}
	return ""
}

// StartNanos and EndNanos are when the span started and ended.
func (s *Span) StartNanos() int64 { n, _ := strconv.ParseInt(s.Start, 10, 64); return n }
func (s *Span) EndNanos() int64   { n, _ := strconv.ParseInt(s.End, 10, 64); return n }

// Duration is how long the span lasted.
func (s *Span) Duration() time.Duration { return time.Duration(s.EndNanos() - s.StartNanos()) }

// Await reads the collector's spans until done holds for them (at most
// timeout), and returns them.
func (c *Collector) Await(t testing.TB, timeout time.Duration, done func([]Span) bool) []Span {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		spans := c.Spans(t)
		if done(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s the collector holds %d spans, not what the test waits for", timeout, len(spans))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// AwaitTraces reads the collector's spans until it holds a span of every
// trace (at most 30 seconds), and returns them.
func (c *Collector) AwaitTraces(t testing.TB, traces []string) []Span {
	t.Helper()
	return c.Await(t, 30*time.Second, func(spans []Span) bool {
		seen := map[string]bool{}
		for _, s := range spans {
			seen[s.TraceID] = true
		}
		for _, tr := range traces {
			if !seen[tr] {
				return false
			}
		}
		return true
	})
}

// Spans reads every span the collector has written so far.
func (c *Collector) Spans(t testing.TB) []Span {
	t.Helper()
	f, err := os.Open(c.spans)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Span
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var batch struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []Span `json:"spans"`
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

// Find returns the span of trace named name, or nil.
func Find(spans []Span, trace, name string) *Span {
	for i := range spans {
		if spans[i].TraceID == trace && spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

// FindBelow returns the first span named name at or below root, in
// root's trace; nil when there is none. A name can stand at several places
// of one trace (the reconcile that creates a Job reads the sources, and so
// does the Job).
func FindBelow(spans []Span, root *Span, name string) *Span {
	for i := range spans {
		if s := &spans[i]; s.TraceID == root.TraceID && s.Name == name && Descends(spans, s, root) {
			return s
		}
	}
	return nil
}

// Descends reports whether s is root or below it.
func Descends(spans []Span, s, root *Span) bool {
	for hops := 0; s != nil && hops < 20; hops++ {
		if root != nil && s.SpanID == root.SpanID {
			return true
		}
		var parent *Span
		for i := range spans {
			if spans[i].TraceID == s.TraceID && spans[i].SpanID == s.ParentSpanID {
				parent = &spans[i]
			}
		}
		s = parent
	}
	return false
}

// freePort asks the kernel for a port free on host.
func freePort(t testing.TB, host string) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("listening on %s: %v", host, err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects the collector's output from its two streams.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
