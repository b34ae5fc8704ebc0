// Package rerank scores texts against a query with a cross-encoder served
// over HTTP, in the two common conventions: Hugging Face Text Embeddings
// Inference (POST /rerank) and Cohere / Jina (POST /v1/rerank).
package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Convention names the wire format of a reranker.
type Convention string

const (
	// TEI is Hugging Face Text Embeddings Inference: POST /rerank with
	// {query, texts}, answered by [{index, score}].
	TEI Convention = "TEI"
	// Cohere is Cohere's and Jina's: POST /v1/rerank with {model, query,
	// documents, top_n}, answered by {results: [{index, relevance_score}]}.
	Cohere Convention = "Cohere"
)

// Defaults of Options.
const (
	DefaultTimeout = 2 * time.Second
	DefaultRetries = 1
)

// Options configure a Client.
type Options struct {
	// URL is the server's base URL, e.g. http://reranker:8080.
	URL string
	// Convention is TEI or Cohere.
	Convention Convention
	// Model names the model (Cohere convention only).
	Model string
	// Timeout bounds each attempt (default DefaultTimeout).
	Timeout time.Duration
	// Retries is how many times a failed attempt is repeated (default
	// DefaultRetries; negative means none). Only network errors, 429 and
	// 5xx answers are retried.
	Retries int
	// HTTPClient sends the requests (default http.DefaultClient).
	HTTPClient *http.Client
}

// Client scores texts with a reranker. It is safe for concurrent use.
type Client struct {
	o    Options
	path string
}

// New validates o and returns a client.
func New(o Options) (*Client, error) {
	if o.URL == "" {
		return nil, errors.New("rerank: a URL is required")
	}
	var path string
	switch o.Convention {
	case TEI:
		path = "/rerank"
	case Cohere:
		path = "/v1/rerank"
	default:
		return nil, fmt.Errorf("rerank: unknown convention %q (want %s or %s)", o.Convention, TEI, Cohere)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	return &Client{o: o, path: strings.TrimSuffix(o.URL, "/") + path}, nil
}

// Scores returns one relevance score per text, in the order of texts
// (higher is more relevant). Texts the server leaves out score -Inf-like
// minimum float64 so they sort last. It fails when every attempt fails or
// the answer names a text that was not sent.
func (c *Client) Scores(ctx context.Context, query string, texts []string) ([]float64, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, err := c.request(query, texts)
	if err != nil {
		return nil, err
	}
	var last error
	for attempt := 0; attempt <= max(0, c.o.Retries); attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, time.Duration(attempt)*50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		data, retry, err := c.post(ctx, body)
		if err == nil {
			return c.decode(data, len(texts))
		}
		last = err
		if !retry || ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

// request encodes the body of one rerank request.
func (c *Client) request(query string, texts []string) ([]byte, error) {
	if c.o.Convention == TEI {
		return json.Marshal(struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}{query, texts})
	}
	return json.Marshal(struct {
		Model     string   `json:"model,omitempty"`
		Query     string   `json:"query"`
		Documents []string `json:"documents"`
		TopN      int      `json:"top_n"`
	}{c.o.Model, query, texts, len(texts)})
}

// post sends one attempt; retry says whether a failure may pass on a
// second attempt.
func (c *Client) post(ctx context.Context, body []byte) (data []byte, retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.path, bytes.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("rerank: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.o.HTTPClient.Do(req)
	if err != nil {
		return nil, true, fmt.Errorf("rerank: %w", err)
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, true, fmt.Errorf("rerank: reading answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		retry = resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		return nil, retry, fmt.Errorf("rerank: %s answered %d: %s", c.path, resp.StatusCode, strings.TrimSpace(string(data[:min(len(data), 200)])))
	}
	return data, false, nil
}

// scored is one entry of an answer in either convention.
type scored struct {
	Index          int      `json:"index"`
	Score          *float64 `json:"score"`
	RelevanceScore *float64 `json:"relevance_score"`
}

// decode reads an answer into one score per sent text.
func (c *Client) decode(data []byte, n int) ([]float64, error) {
	var entries []scored
	if c.o.Convention == TEI {
		if err := json.Unmarshal(data, &entries); err != nil {
			return nil, fmt.Errorf("rerank: decoding answer: %w", err)
		}
	} else {
		var answer struct {
			Results []scored `json:"results"`
		}
		if err := json.Unmarshal(data, &answer); err != nil {
			return nil, fmt.Errorf("rerank: decoding answer: %w", err)
		}
		entries = answer.Results
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = -1e308
	}
	for _, e := range entries {
		s := e.Score
		if s == nil {
			s = e.RelevanceScore
		}
		if e.Index < 0 || e.Index >= n || s == nil {
			return nil, fmt.Errorf("rerank: answer names text %d of %d, or has no score", e.Index, n)
		}
		out[e.Index] = *s
	}
	return out, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
