// Package reranktest serves rerank requests in the Text Embeddings
// Inference and Cohere conventions, following each schema strictly (unknown
// fields are refused), for tests of rerank clients.
package reranktest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
)

// Score is what the servers score a text: how often word occurs in it,
// ignoring case. It stands in for a cross-encoder that knows which texts
// answer the query.
func Score(word, text string) float64 {
	return float64(strings.Count(strings.ToLower(text), strings.ToLower(word)))
}

// NewTEI starts a server that scores texts by Score(word, text) and
// answers POST /rerank as Text Embeddings Inference does: a JSON array of
// {index, score}, best first.
func NewTEI(word string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/rerank" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil || req.Query == "" || len(req.Texts) == 0 {
			http.Error(w, `{"error":"bad request"}`, http.StatusUnprocessableEntity)
			return
		}
		type entry struct {
			Index int     `json:"index"`
			Score float64 `json:"score"`
		}
		out := make([]entry, len(req.Texts))
		for i, text := range req.Texts {
			out[len(req.Texts)-1-i] = entry{Index: i, Score: Score(word, text)}
		}
		json.NewEncoder(w).Encode(out)
	}))
}

// NewCohere starts a server that scores texts by Score(word, text) and
// answers POST /v1/rerank as Cohere and Jina do: {results: [{index,
// relevance_score}]}, at most top_n of them.
func NewCohere(word string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/rerank" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req struct {
			Model     string   `json:"model"`
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			TopN      int      `json:"top_n"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil || req.Model == "" || req.TopN != len(req.Documents) {
			http.Error(w, `{"message":"bad request"}`, http.StatusBadRequest)
			return
		}
		type result struct {
			Index          int     `json:"index"`
			RelevanceScore float64 `json:"relevance_score"`
		}
		var out struct {
			Results []result `json:"results"`
		}
		for i, d := range req.Documents[:req.TopN] {
			out.Results = append(out.Results, result{Index: i, RelevanceScore: Score(word, d)})
		}
		json.NewEncoder(w).Encode(out)
	}))
}
