// Package embedtest is an OpenAI-compatible /v1/embeddings endpoint for
// tests: real HTTP, the real request and response shapes, a vector made
// by a function of the text, and a count of the texts embedded.
package embedtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Options shape a Server.
type Options struct {
	// APIKey, when set, is required as a bearer token.
	APIKey string
	// Dimensions, when set, must be what requests ask for.
	Dimensions int
	// Embed makes a text's vector.
	Embed func(text string) []float32
	// Model is reported in responses.
	Model string
}

// Server answers embedding requests until the test ends.
type Server struct {
	*httptest.Server
	// Texts counts the texts embedded.
	Texts atomic.Int64
}

// Start starts a Server that closes when the test ends.
func Start(t testing.TB, o Options) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, o) }))
	t.Cleanup(s.Close)
	return s
}

// serve answers one request: 401 without the key, 400 for a bad request,
// otherwise one embedding per input, in order.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, o Options) {
	var req struct {
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions"`
	}
	if o.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+o.APIKey {
		http.Error(w, `{"error":{"message":"invalid API key"}}`, http.StatusUnauthorized)
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/embeddings" || (o.Dimensions > 0 && req.Dimensions != o.Dimensions) {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.Texts.Add(int64(len(req.Input)))
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: o.Model}
	for i, text := range req.Input {
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: o.Embed(text)})
	}
	json.NewEncoder(w).Encode(out)
}
