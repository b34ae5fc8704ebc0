package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRetrieveRequest sends arbitrary bodies to /v1/retrieve: the server
// never panics, answers only with the codes its API documents, and every
// refusal is a JSON error with a message.
func FuzzRetrieveRequest(f *testing.F) {
	for _, seed := range []string{
		`{"query": "tomatoes"}`,
		`{"query": "tomatoes", "maxParents": 2, "childTopK": 5, "aggregation": "Mean", "budget": 40}`,
		`{"query": "soil", "filter": {"docIds": ["garden"], "metadata": {"lang": "en"}}}`,
		`{"QUERY": "x"}`, `{"query": "a", "query": "b"}`, `{"query": ""}`, `[]`, `{"query": 1}`,
		`{"query": "x", "budget": 1}`, `{"query": "x"} trailing`, ``,
	} {
		f.Add(seed)
	}
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(f, corpus(), "rev-a"))
	h := s.Handler()
	allowed := map[int]bool{http.StatusOK: true, http.StatusBadRequest: true, http.StatusRequestEntityTooLarge: true,
		http.StatusServiceUnavailable: true, http.StatusGatewayTimeout: true}
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/retrieve", strings.NewReader(body)))
		if !allowed[rec.Code] {
			t.Fatalf("body %q: status %d: %s", body, rec.Code, rec.Body)
		}
		if rec.Code == http.StatusOK {
			var resp RetrieveResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Revision != "rev-a" {
				t.Fatalf("body %q: 200 with %q (%v)", body, rec.Body, err)
			}
			return
		}
		var e ErrorResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
			t.Fatalf("body %q: %d without a JSON error: %q", body, rec.Code, rec.Body)
		}
	})
}
