package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is a non-2xx response from the embeddings API. Message, Type and
// Code come from the OpenAI error body {"error":{"message","type","code"}};
// when the body is not of that shape Message holds its beginning instead.
type APIError struct {
	// StatusCode is the HTTP status, never 2xx.
	StatusCode int
	// Message is the API's error.message, or the start of a non-JSON body.
	Message string
	// Type is the API's error.type, empty when absent.
	Type string
	// Code is the API's error.code (string or number) as text, empty when
	// absent or null.
	Code string
	// RetryAfter is the delay the server asked for through retry-after-ms
	// or Retry-After, valid when HasRetryAfter.
	RetryAfter    time.Duration
	HasRetryAfter bool
}

// Error describes the status and the API's message, type and code.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "http %d %s", e.StatusCode, strings.ToLower(http.StatusText(e.StatusCode)))
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Type != "" {
		fmt.Fprintf(&b, " (type %s)", e.Type)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " (code %s)", e.Code)
	}
	return b.String()
}

// Retryable reports whether the status is worth retrying: 429 or 5xx.
func (e *APIError) Retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// transportError is a failure to send a request or read its response, which
// is always retried.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// embeddingRequest is the JSON body of POST /v1/embeddings.
type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

// embeddingResponse is the JSON body of a successful response.
type embeddingResponse struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// embedBatch embeds inputs in one request, retried as documented on OpenAI,
// and returns the embeddings in input order.
func (c *OpenAI) embedBatch(ctx context.Context, inputs []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingRequest{
		Model: c.opts.Model, Input: inputs, Dimensions: c.opts.Dimensions, EncodingFormat: "float",
	})
	if err != nil {
		return nil, fmt.Errorf("openai embeddings: encode request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		vecs, err := c.post(ctx, body, len(inputs))
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil || !retryable(err) || attempt >= c.opts.MaxRetries {
			return nil, attemptsError(attempt, err)
		}
		if werr := sleep(ctx, c.retryDelay(attempt, err)); werr != nil {
			return nil, fmt.Errorf("openai embeddings: %w while waiting to retry: %w", werr, err)
		}
	}
}

// attemptsError wraps the last error, noting retries when there were any.
func attemptsError(attempt int, err error) error {
	if attempt == 0 {
		return fmt.Errorf("openai embeddings: %w", err)
	}
	return fmt.Errorf("openai embeddings: giving up after %d attempts: %w", attempt+1, err)
}

// retryable reports whether err, from one attempt, is worth retrying.
func retryable(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Retryable()
	}
	var tErr *transportError
	return errors.As(err, &tErr)
}

// retryDelay is the wait before retry number attempt+1: the server's
// Retry-After when given, else BackoffBase·2^attempt with equal jitter; both
// capped at BackoffMax.
func (c *OpenAI) retryDelay(attempt int, err error) time.Duration {
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.HasRetryAfter {
		return min(apiErr.RetryAfter, c.opts.BackoffMax)
	}
	d := c.opts.BackoffMax
	if attempt < 32 {
		d = min(c.opts.BackoffBase<<attempt, c.opts.BackoffMax)
	}
	half := d / 2
	return half + rand.N(half+1)
}

// sleep waits for d or until ctx ends, returning ctx's error in that case.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// post makes one attempt, bounded by Timeout, and decodes the response.
func (c *OpenAI) post(ctx context.Context, body []byte, n int) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "parentrag")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, &transportError{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newAPIError(resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, &transportError{fmt.Errorf("read response: %w", err)}
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("response larger than %d bytes", maxResponseBytes)
	}
	return c.decode(data, n)
}

// newAPIError reads an error response into an APIError.
func newAPIError(resp *http.Response) *APIError {
	e := &APIError{StatusCode: resp.StatusCode}
	e.RetryAfter, e.HasRetryAfter = parseRetryAfter(resp.Header, time.Now())
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	var body struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && body.Error != nil {
		e.Message, e.Type = body.Error.Message, body.Error.Type
		if body.Error.Code != nil {
			e.Code = fmt.Sprint(body.Error.Code)
		}
		return e
	}
	e.Message = snippet(data)
	return e
}

// snippet returns the beginning of a non-JSON body, on one line.
func snippet(data []byte) string {
	const limit = 200
	s := strings.Join(strings.Fields(string(data)), " ")
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}

// parseRetryAfter reads OpenAI's retry-after-ms header, else the standard
// Retry-After (seconds, or an HTTP date relative to now).
func parseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// decode parses a successful response for n inputs, placing each embedding
// by its index and checking that every index is present exactly once and
// that all embeddings share one non-zero length (Dimensions when set).
func (c *OpenAI) decode(data []byte, n int) ([][]float32, error) {
	var resp embeddingResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	out := make([][]float32, n)
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= n {
			return nil, fmt.Errorf("response index %d out of range for %d inputs", d.Index, n)
		}
		if out[d.Index] != nil {
			return nil, fmt.Errorf("response repeats index %d", d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("response embedding %d is empty", d.Index)
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if v == nil {
			return nil, fmt.Errorf("response lacks index %d: %d embeddings for %d inputs", i, len(resp.Data), n)
		}
	}
	return out, c.checkDims(out)
}

// checkDims verifies that the embeddings of one response share a length,
// equal to Dimensions when it is set.
func (c *OpenAI) checkDims(vecs [][]float32) error {
	want := c.opts.Dimensions
	if want == 0 && len(vecs) > 0 {
		want = len(vecs[0])
	}
	for i, v := range vecs {
		if len(v) != want {
			return fmt.Errorf("embedding %d has %d dimensions, want %d", i, len(v), want)
		}
	}
	return nil
}
