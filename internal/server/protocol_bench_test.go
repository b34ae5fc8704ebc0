package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// docsCorpus is the project's own docs/*.md as documents.
func docsCorpus(tb testing.TB) []hierarchy.Document {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no docs/*.md (%v)", err)
	}
	docs := make([]hierarchy.Document, len(paths))
	for i, p := range paths {
		text, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		docs[i] = hierarchy.Document{ID: filepath.Base(p), Text: string(text)}
	}
	return docs
}

// BenchmarkProtocols answers one query through each protocol's endpoint,
// in process, on an index of the project's docs: the time over
// /v1/retrieve is what the adapter adds (decoding, mapping, encoding and,
// for OpenAI, reading the parents' metadata).
func BenchmarkProtocols(b *testing.B) {
	// Every protocol asks the server's default number of parents, since
	// LangChain's request cannot say.
	s := New(Options{ShutdownDelay: -1, Corpus: "docs", Defaults: retrieve.Options{MaxParents: 5}})
	s.SetBundle(openBundle(b, docsCorpus(b), "bench"))
	h := s.Handler()
	const q = "How are parents trimmed to a budget?"
	var retrieveMicros float64 // the baseline, measured first
	for _, p := range []struct{ name, path, body string }{
		{"retrieve", "/v1/retrieve", `{"query": "` + q + `"}`},
		{"langchain", LangChainPath, `{"message": "` + q + `"}`},
		{"openai", "/v1/vector_stores/docs/search", `{"query": "` + q + `"}`},
		{"mcp", MCPPath, `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "retrieve", "arguments": {"query": "` + q + `"}}}`},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, p.path, strings.NewReader(p.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"isError":true`) {
					b.Fatalf("%s: %d %s", p.path, rec.Code, rec.Body)
				}
			}
			micros := float64(b.Elapsed().Nanoseconds()) / 1e3 / float64(b.N)
			if p.name == "retrieve" {
				retrieveMicros = micros
				return
			}
			b.ReportMetric(micros-retrieveMicros, "µs-over-retrieve")
		})
	}
}
