package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/policy/policytest"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// openLevelsBundle saves bundletest's handbook with a policy of sections,
// parents and children and opens it.
func openLevelsBundle(t *testing.T) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Open(policytest.SavePolicy(t, []hierarchy.Document{bundletest.Handbook()}, policytest.LevelsPolicy(), "rev-levels"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestEveryProtocolSaysTheLevel checks, through the OpenAPI validator, that
// a request may ask for the Adaptive mode, that an unknown mode is
// refused, and that /v1/retrieve, LangChain, OpenAI's search and MCP each
// say which level every context comes from: the hotels section, whose
// paragraphs both match, and the meals sentence that mentions a hotel.
func TestEveryProtocolSaysTheLevel(t *testing.T) {
	defaults := retrieve.Options{MaxParents: 3, ChildTopK: 20, Aggregation: retrieve.AggregateMax, Mode: retrieve.ModeAdaptive}
	s := New(Options{ShutdownDelay: -1, Corpus: "handbook", Defaults: defaults})
	s.SetBundle(openLevelsBundle(t))
	ts, _ := newValidatedServer(t, s)
	c := ts.Client()
	want := []hierarchy.Level{hierarchy.LevelSection, hierarchy.LevelWindow}

	code, body := doJSON(t, c, "POST", ts.URL+"/v1/retrieve", `{"query": "hotel room", "mode": "Adaptive"}`)
	var resp RetrieveResponse
	decodeStrict(t, body, &resp)
	if code != http.StatusOK || len(resp.Results) < 2 || resp.Results[0].Level != want[0] || resp.Results[1].Level != want[1] {
		t.Fatalf("/v1/retrieve: %d %s, want a section then a window", code, body)
	}
	if !strings.Contains(resp.Results[0].Text, "## Hotels") || strings.Contains(resp.Results[0].Text, "Meals") || !strings.Contains(resp.Results[1].Text, "Breakfast at the hotel") {
		t.Errorf("the section returned is %q, want the hotels section", resp.Results[0].Text)
	}
	if code, body := doJSON(t, c, "POST", ts.URL+"/v1/retrieve", `{"query": "hotel room", "mode": "Parents"}`); code != http.StatusOK || !strings.Contains(string(body), `"level":"parent"`) {
		t.Errorf("mode Parents: %d %s, want parents", code, body)
	}
	if code, body := doJSON(t, c, "POST", ts.URL+"/v1/retrieve", `{"query": "hotel", "mode": "Sections"}`); code != http.StatusBadRequest || !strings.Contains(string(body), `mode \"Sections\": want Parents or Adaptive`) {
		t.Errorf("unknown mode: %d %s, want 400 naming the modes", code, body)
	}

	_, body = doJSON(t, c, "POST", ts.URL+LangChainPath, `{"message": "hotel room"}`)
	var lc LangChainResponse
	decodeStrict(t, body, &lc)
	if len(lc.Response) < 2 || lc.Response[0].Metadata.Level != want[0] || lc.Response[1].Metadata.Level != want[1] {
		t.Errorf("LangChain answered %s, want levels %v", body, want)
	}

	_, body = doJSON(t, c, "POST", ts.URL+"/v1/vector_stores/handbook/search", `{"query": "hotel room"}`)
	var page VectorStoreSearchPage
	decodeStrict(t, body, &page)
	if len(page.Data) < 2 || page.Data[0].Attributes["level"] != string(want[0]) || page.Data[1].Attributes["level"] != string(want[1]) {
		t.Errorf("OpenAI search answered %s, want levels %v in the attributes", body, want)
	}

	_, body = doJSON(t, c, "POST", ts.URL+MCPPath, `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "retrieve", "arguments": {"query": "hotel room", "mode": "Adaptive"}}}`)
	if !strings.Contains(string(body), "section ") || !strings.Contains(string(body), `"level":"section"`) {
		t.Errorf("MCP answered %s, want the level in the text and the structured content", body)
	}
}
