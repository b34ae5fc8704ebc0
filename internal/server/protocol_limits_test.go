package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// protocolPosts are one query through each HTTP protocol, with how to
// read its error message.
var protocolPosts = []struct {
	endpoint, path, body string
	message              func([]byte) string
}{
	{"/v1/retrieve", "/v1/retrieve", `{"query": "tomatoes"}`, errorMessage},
	{LangChainPath, LangChainPath, `{"message": "tomatoes"}`, errorMessage},
	{VectorStoreSearchPath, "/v1/vector_stores/default/search", `{"query": "tomatoes"}`, openAIErrorMessage},
}

func errorMessage(data []byte) string {
	var e ErrorResponse
	json.Unmarshal(data, &e)
	return e.Error
}

func openAIErrorMessage(data []byte) string {
	var e OpenAIError
	json.Unmarshal(data, &e)
	return e.Error.Message
}

// With its one slot held and no queue, the server refuses a query of
// every protocol with 503 and Retry-After (a tool error for MCP), in that
// protocol's error shape, and counts each refusal and each answer.
func TestEveryProtocolSharesAdmissionControl(t *testing.T) {
	var base string
	var client *http.Client
	s := newHeldServer(t, Options{}, func(s *Server) string {
		ts, _ := newValidatedServer(t, s)
		base, client = ts.URL, ts.Client()
		return ts.URL
	})
	for _, p := range protocolPosts {
		req, _ := http.NewRequest("POST", base+p.path, strings.NewReader(p.body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var data [4096]byte
		n, _ := resp.Body.Read(data[:])
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(p.message(data[:n]), "queue is full") {
			t.Errorf("%s: %d %q Retry-After %q, want 503 saying the queue is full", p.path, resp.StatusCode, data[:n], resp.Header.Get("Retry-After"))
		}
	}
	res := callRetrieve(t, connectMCP(t, base, client), map[string]any{"query": "tomatoes"})
	if !res.IsError || !strings.Contains(toolText(res), "server overloaded") {
		t.Errorf("mcp: %v %q, want a tool error saying the server is overloaded", res.IsError, toolText(res))
	}
	_, metrics := do(t, client, "GET", base+"/metrics", "")
	if want := `parentrag_requests_rejected_total{reason="queue_full"} 4`; !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %s", want)
	}
	for _, p := range protocolPosts[1:] {
		if got := metricLine(t, client, base, p.endpoint, "503"); got != "1" {
			t.Errorf("%s 503 counted %q times, want 1", p.endpoint, got)
		}
	}
	if got := metricLine(t, client, base, MCPPath, "200"); got == "" {
		t.Errorf("%s requests are not counted", MCPPath)
	}
	s.release()
}

// Past the request timeout every protocol answers 504 (a tool error for
// MCP), counted as a timeout.
func TestEveryProtocolSharesRequestTimeout(t *testing.T) {
	s := New(Options{RequestTimeout: 50 * time.Millisecond, ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	s.beforeRetrieve = func(ctx context.Context) { <-ctx.Done() }
	ts, _ := newValidatedServer(t, s)
	for _, p := range protocolPosts {
		code, data := doJSON(t, ts.Client(), "POST", ts.URL+p.path, p.body)
		if code != http.StatusGatewayTimeout || !strings.Contains(p.message(data), "timed out after 50ms") {
			t.Errorf("%s: %d %s, want 504", p.path, code, data)
		}
	}
	res := callRetrieve(t, connectMCP(t, ts.URL, ts.Client()), map[string]any{"query": "tomatoes"})
	if !res.IsError || !strings.Contains(toolText(res), "timed out after 50ms") {
		t.Errorf("mcp: %v %q, want a tool error saying it timed out", res.IsError, toolText(res))
	}
	_, metrics := do(t, ts.Client(), "GET", ts.URL+"/metrics", "")
	if want := `parentrag_requests_rejected_total{reason="timeout"} 4`; !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// The MCP endpoint refuses a body over the server's limit, as the others.
func TestMCPBodyLimit(t *testing.T) {
	s := New(Options{MaxBodyBytes: 256, ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, _ := newValidatedServer(t, s)
	body := `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "retrieve", "arguments": {"query": "` + strings.Repeat("tomato ", 50) + `"}}}`
	if code, data := doJSON(t, ts.Client(), "POST", ts.URL+MCPPath, body); code != http.StatusRequestEntityTooLarge {
		t.Errorf("%d bytes: %d %s, want 413", len(body), code, data)
	}
}

// With the one heavy slot held, a heavy query of every HTTP protocol is
// refused with 429 and Retry-After in that protocol's error shape, as the
// OpenAPI document describes it, while short questions are still answered.
func TestEveryProtocolRefusesHeavyQueriesWith429(t *testing.T) {
	s := New(Options{MaxInFlight: 4, MaxHeavyInFlight: 1, HeavyBodyBytes: 1024, QueueWait: 50 * time.Millisecond, Corpus: "default"})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	held, release := holdFirstRetrieval(s)
	defer release()
	ts, _ := newValidatedServer(t, s)
	postHeavy := func() {
		if resp, err := ts.Client().Post(ts.URL+"/v1/retrieve", "application/json", strings.NewReader(fmt.Sprintf(`{"query": %q}`, longQuery(4096)))); err == nil {
			resp.Body.Close()
		}
	}
	go postHeavy()
	<-held
	// The heavy lane has as many queue places as slots: fill the one.
	go postHeavy()
	time.Sleep(20 * time.Millisecond)
	heavy := map[string]string{
		"/v1/retrieve":                     fmt.Sprintf(`{"query": %q}`, longQuery(2048)),
		LangChainPath:                      fmt.Sprintf(`{"message": %q}`, longQuery(2048)),
		"/v1/vector_stores/default/search": fmt.Sprintf(`{"query": %q}`, longQuery(2048)),
	}
	for _, p := range protocolPosts {
		code, data := doJSON(t, ts.Client(), "POST", ts.URL+p.path, heavy[p.path])
		if code != http.StatusTooManyRequests || !strings.Contains(p.message(data), "too many heavy queries") {
			t.Errorf("%s heavy, its lane full: %d %q, want 429 saying too many heavy queries", p.path, code, data)
		}
		if code, data := doJSON(t, ts.Client(), "POST", ts.URL+p.path, p.body); code != http.StatusOK {
			t.Errorf("%s short, the heavy lane full: %d %s, want 200", p.path, code, data)
		}
	}
}
