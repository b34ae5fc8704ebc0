package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzedStatus are the codes a retrieving endpoint may answer a body with.
var fuzzedStatus = map[int]bool{http.StatusOK: true, http.StatusBadRequest: true, http.StatusRequestEntityTooLarge: true,
	http.StatusServiceUnavailable: true, http.StatusGatewayTimeout: true}

// fuzzEndpoint posts arbitrary bodies to path of a server with a real
// index: it never panics, answers only codes in fuzzedStatus, and check
// accepts each answer.
func fuzzEndpoint(f *testing.F, path string, seeds []string, check func(t *testing.T, body string, code int, answer []byte)) {
	for _, seed := range seeds {
		f.Add(seed)
	}
	s := New(Options{ShutdownDelay: -1, Corpus: "docs"})
	s.SetBundle(openBundle(f, corpus(), "rev-a"))
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		h.ServeHTTP(rec, req)
		if !fuzzedStatus[rec.Code] && rec.Code != http.StatusAccepted {
			t.Fatalf("body %q: status %d: %s", body, rec.Code, rec.Body)
		}
		check(t, body, rec.Code, rec.Body.Bytes())
	})
}

// FuzzLangChainRequest: every 200 is a list of documents, every refusal a
// JSON error with a message.
func FuzzLangChainRequest(f *testing.F) {
	fuzzEndpoint(f, LangChainPath, []string{
		`{"message": "tomatoes"}`, `{"message": ""}`, `{"Message": "x"}`, `{"message": "a", "message": "b"}`,
		`{"message": 1}`, `{"query": "x"}`, `[]`, ``, `{"message": "x"} trailing`,
	}, func(t *testing.T, body string, code int, answer []byte) {
		if code == http.StatusOK {
			var resp LangChainResponse
			if err := json.Unmarshal(answer, &resp); err != nil || resp.Response == nil {
				t.Fatalf("body %q: 200 with %q (%v)", body, answer, err)
			}
			return
		}
		if msg := errorMessage(answer); msg == "" {
			t.Fatalf("body %q: %d without a JSON error: %q", body, code, answer)
		}
	})
}

// FuzzVectorStoreSearchRequest: every 200 is a search results page, every
// refusal an error in OpenAI's shape.
func FuzzVectorStoreSearchRequest(f *testing.F) {
	fuzzEndpoint(f, "/v1/vector_stores/docs/search", []string{
		`{"query": "tomatoes", "max_num_results": 2}`, `{"query": ["a", "b"]}`, `{"query": []}`,
		`{"query": "x", "filters": {"type": "eq", "key": "team", "value": "search"}}`,
		`{"query": "x", "filters": {"type": "and", "filters": [{"type": "eq", "key": "file_id", "value": "garden.md"}, {"type": "and", "filters": []}]}}`,
		`{"query": "x", "filters": {"type": "or", "filters": [{"type": "gt", "key": "n", "value": 1}]}}`,
		`{"query": "x", "ranking_options": {"ranker": "auto", "score_threshold": 0.5}, "rewrite_query": false}`,
		`{"query": "x", "rewrite_query": true}`, `{"query": 1}`, ``,
	}, func(t *testing.T, body string, code int, answer []byte) {
		if code == http.StatusOK {
			var page VectorStoreSearchPage
			if err := json.Unmarshal(answer, &page); err != nil || page.Object != "vector_store.search_results.page" || page.Data == nil {
				t.Fatalf("body %q: 200 with %q (%v)", body, answer, err)
			}
			return
		}
		var e OpenAIError
		if err := json.Unmarshal(answer, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
			t.Fatalf("body %q: %d without an OpenAI error: %q", body, code, answer)
		}
	})
}

// FuzzMCPRequest: every answer to a JSON-RPC message is a JSON-RPC
// message or an empty 202; anything else is a 4xx.
func FuzzMCPRequest(f *testing.F) {
	fuzzEndpoint(f, MCPPath, []string{
		`{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}`,
		`{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "retrieve", "arguments": {"query": "tomatoes", "maxParents": 2}}}`,
		`{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "retrieve", "arguments": {"query": "x", "filter": {"docIdPrefix": "ops/"}, "budget": 1}}}`,
		`{"jsonrpc": "2.0", "method": "notifications/initialized"}`,
		`{"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "f", "version": "1"}}}`,
		`[]`, `{}`, ``, `{"jsonrpc": "1.0"}`,
	}, func(t *testing.T, body string, code int, answer []byte) {
		if code == http.StatusOK {
			var msg struct {
				JSONRPC string `json:"jsonrpc"`
			}
			if err := json.Unmarshal(answer, &msg); err != nil || msg.JSONRPC != "2.0" {
				t.Fatalf("body %q: 200 with %q (%v)", body, answer, err)
			}
		}
		if code == http.StatusAccepted && len(answer) != 0 {
			t.Fatalf("body %q: 202 with a body %q", body, answer)
		}
	})
}
