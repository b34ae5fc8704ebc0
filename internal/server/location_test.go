package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/policy/policytest"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// manualPDF is a document as the PDF reader makes one: 33 pages, the
// outline as headings, and where each page starts. Section 4.2 begins on
// page 31 and ends on page 32.
func manualPDF() hierarchy.Document {
	var text strings.Builder
	var starts []int
	page := func(body string) {
		if text.Len() > 0 {
			text.WriteString("\n\n")
		}
		starts = append(starts, utf8.RuneCountInString(text.String()))
		text.WriteString(body)
	}
	page("# 1 Gardening\n\nThe first chapter is about the garden.")
	for n := 2; n <= 30; n++ {
		page(fmt.Sprintf("Page %d of the garden chapter: tomatoes, basil, compost and mulch number %d.", n, n))
	}
	page("# 4 Proxies\n\nThis chapter explains the proxy: how it is configured, how it chooses where requests go, and what it writes down.\n\n" +
		"## 4.2 Configuring the proxy\n\nThe proxy forwards requests to the upstream servers listed in its configuration file. " +
		"The file is read at start-up and again on a reload signal.")
	page("Each upstream entry names a host and a port; the proxy retries another upstream when one fails. " +
		"Timeouts for connecting and for reading are set per upstream, in seconds.")
	page("## 4.3 Logging\n\nThe proxy writes one access log line per request, with the time, the client address, " +
		"the status and the duration. Logs rotate daily and are kept for a week unless configured otherwise.")
	return hierarchy.Document{ID: "manual.pdf", Title: "Proxy manual", Text: text.String(), PageStarts: starts}
}

// sectionBundle builds docs with section parents and opens the bundle.
func sectionBundle(t *testing.T, docs []hierarchy.Document) *bundle.Bundle {
	t.Helper()
	spec := &v1alpha1.ChunkingPolicySpec{
		Parent: &v1alpha1.ChunkSize{ChunkSize: 2000, Boundaries: v1alpha1.BoundariesSections},
		Child:  &v1alpha1.ChunkSize{ChunkSize: 200, ChunkOverlap: 20},
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	if _, err := build.Run(context.Background(), policytest.PolicyRequest(t, docs, spec, bundle.VectorStoreRef{}, dir)); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestEveryProtocolSaysWhereAParentLies checks that a parent of a paged,
// sectioned document is answered with its heading path and pages by
// every protocol, each answer matching the OpenAPI document.
func TestEveryProtocolSaysWhereAParentLies(t *testing.T) {
	s := New(Options{ShutdownDelay: -1, Corpus: "docs"})
	s.SetBundle(sectionBundle(t, []hierarchy.Document{manualPDF()}))
	ts, _ := newValidatedServer(t, s)
	c := ts.Client()
	wantPath := []string{"4 Proxies", "4.2 Configuring the proxy"}
	wantPages := &hierarchy.Pages{First: 31, Last: 32}
	const query = `upstream retries another upstream`

	var retrieved RetrieveResponse
	postJSON(t, c, ts.URL+"/v1/retrieve", `{"query": "`+query+`", "maxParents": 1}`, &retrieved)
	if len(retrieved.Results) != 1 || !reflect.DeepEqual(retrieved.Results[0].HeadingPath, wantPath) || !reflect.DeepEqual(retrieved.Results[0].Pages, wantPages) {
		t.Fatalf("/v1/retrieve answered %+v, want %v on pages %+v", retrieved.Results, wantPath, wantPages)
	}

	var lc LangChainResponse
	postJSON(t, c, ts.URL+LangChainPath, `{"message": "`+query+`"}`, &lc)
	if m := lc.Response[0].Metadata; !reflect.DeepEqual(m.HeadingPath, wantPath) || !reflect.DeepEqual(m.Pages, wantPages) {
		t.Errorf("LangChain metadata %+v, want heading path %v and pages %+v", m, wantPath, wantPages)
	}

	var vs VectorStoreSearchPage
	postJSON(t, c, ts.URL+"/v1/vector_stores/docs/search", `{"query": "`+query+`", "max_num_results": 1}`, &vs)
	if a := vs.Data[0].Attributes; a["headingPath"] != "4 Proxies > 4.2 Configuring the proxy" || a["pages"] != "31-32" {
		t.Errorf("vector store attributes %v, want headingPath and pages 31-32", a)
	}

	text := toolText(callRetrieve(t, connectMCP(t, ts.URL, c), map[string]any{"query": query, "maxParents": 1}))
	if !strings.Contains(text, "source: manual.pdf (Proxy manual), 4 Proxies > 4.2 Configuring the proxy, pages 31-32, parent ") {
		t.Errorf("MCP text %q does not say where the passage lies", text)
	}
}

// postJSON posts body and decodes a 200 answer into out.
func postJSON(t *testing.T, c *http.Client, url, body string, out any) {
	t.Helper()
	code, data := doJSON(t, c, "POST", url, body)
	if code != 200 {
		t.Fatalf("POST %s: %d %s", url, code, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("POST %s: %v in %s", url, err, data)
	}
}

// TestLocationNamesSectionAndPages checks how an answer cites a parent.
func TestLocationNamesSectionAndPages(t *testing.T) {
	for _, tt := range []struct {
		path  []string
		pages *hierarchy.Pages
		want  string
	}{
		{nil, nil, ""},
		{[]string{"4 Proxies", "4.2 Configuring the proxy"}, &hierarchy.Pages{First: 31, Last: 32}, "4 Proxies > 4.2 Configuring the proxy, pages 31-32"},
		{nil, &hierarchy.Pages{First: 7, Last: 7}, "page 7"},
		{[]string{"Intro"}, nil, "Intro"},
	} {
		if got := Location(retrievalResult(tt.path, tt.pages)); got != tt.want {
			t.Errorf("Location(%v, %+v) = %q, want %q", tt.path, tt.pages, got, tt.want)
		}
	}
}

// retrievalResult is a result with only a heading path and pages.
func retrievalResult(path []string, pages *hierarchy.Pages) retrieve.Result {
	return retrieve.Result{HeadingPath: path, Pages: pages}
}
