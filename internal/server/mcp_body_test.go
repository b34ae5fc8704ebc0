package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// mcpCall is a tools/call of retrieve with id, as JSON-RPC.
func mcpCall(id int, query string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": MCPRetrieveTool, "arguments": map[string]any{"query": query}}}
}

// decodeJSONRPCError decodes a JSON-RPC error answer, failing the test when data
// is not one.
func decodeJSONRPCError(t *testing.T, data []byte) (id any, code int, message string) {
	t.Helper()
	var msg struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil || msg.JSONRPC != "2.0" || msg.Error == nil {
		t.Fatalf("%s: not a JSON-RPC error (%v)", data, err)
	}
	return msg.ID, msg.Error.Code, msg.Error.Message
}

// A JSON-RPC batch, which MCP 2025-06-18 removed, is refused whole with
// the JSON-RPC error "invalid request" and id null, whatever protocol
// version the client names, and none of its calls is searched.
func TestMCPRefusesBatches(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	var searched atomic.Int64
	s.beforeRetrieve = func(context.Context) { searched.Add(1) }
	ts, _ := newValidatedServer(t, s)
	batch := mustJSON(t, []any{mcpCall(1, "tomatoes"), mcpCall(2, "sailing"), mcpCall(3, "compost")})
	for _, version := range []string{"", "2025-03-26", "2025-06-18"} {
		req, _ := http.NewRequest("POST", ts.URL+MCPPath, strings.NewReader("  \n"+batch))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("MCP-Protocol-Version", version)
		}
		resp, data := doRequest(t, ts.Client(), req)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("batch, version %q: %d %s, want 400", version, resp.StatusCode, data)
			continue
		}
		id, code, msg := decodeJSONRPCError(t, data)
		if id != nil || code != -32600 || !strings.Contains(msg, "batch") {
			t.Errorf("batch, version %q: id %v code %d %q, want id null, -32600 and a message about batches", version, id, code, msg)
		}
	}
	if n := searched.Load(); n != 0 {
		t.Errorf("%d searches ran for refused batches, want none", n)
	}
	// One call alone is answered.
	if code, data := doJSON(t, ts.Client(), "POST", ts.URL+MCPPath, mustJSON(t, mcpCall(1, "tomatoes"))); code != http.StatusOK {
		t.Errorf("one call: %d %s", code, data)
	}
}

// An oversized MCP body is answered 413 with a JSON-RPC error, as the
// other protocols answer 413.
func TestMCPBodyOverLimitIs413(t *testing.T) {
	s := New(Options{MaxBodyBytes: 1024, ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts, _ := newValidatedServer(t, s)
	code, data := doJSON(t, ts.Client(), "POST", ts.URL+MCPPath, mustJSON(t, mcpCall(1, longQuery(4096))))
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over 1024 bytes: %d %s, want 413", code, data)
	}
	if _, _, msg := decodeJSONRPCError(t, data); !strings.Contains(msg, "over 1024 bytes") {
		t.Errorf("413 says %q, want the limit", msg)
	}
}

// A query holding bytes that are not UTF-8 is refused with 400 on every
// protocol, saying so, rather than searched with the bytes replaced.
func TestInvalidUTF8QueryRefused(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	var searched atomic.Int64
	s.beforeRetrieve = func(context.Context) { searched.Add(1) }
	ts, _ := newValidatedServer(t, s)
	bodies := map[string]string{
		"/v1/retrieve":                     "{\"query\": \"tomat\xffoes\"}",
		LangChainPath:                      "{\"message\": \"tomat\xffoes\"}",
		"/v1/vector_stores/default/search": "{\"query\": \"tomat\xfeoes\"}",
	}
	for _, p := range protocolPosts {
		code, data := doJSON(t, ts.Client(), "POST", ts.URL+p.path, bodies[p.path])
		if code != http.StatusBadRequest || !strings.Contains(p.message(data), "not valid UTF-8") {
			t.Errorf("%s: %d %s, want 400 saying the body is not valid UTF-8", p.path, code, data)
		}
	}
	call := strings.Replace(mustJSON(t, mcpCall(1, "tomatoes")), "tomatoes", "tomat\xffoes", 1)
	code, data := doJSON(t, ts.Client(), "POST", ts.URL+MCPPath, call)
	if code != http.StatusBadRequest {
		t.Errorf("mcp: %d %s, want 400", code, data)
	} else if _, rpc, msg := decodeJSONRPCError(t, data); rpc != -32700 || !strings.Contains(msg, "not valid UTF-8") {
		t.Errorf("mcp: %d %q, want a parse error saying the body is not valid UTF-8", rpc, msg)
	}
	if n := searched.Load(); n != 0 {
		t.Errorf("%d searches ran for queries that are not UTF-8, want none", n)
	}
}
