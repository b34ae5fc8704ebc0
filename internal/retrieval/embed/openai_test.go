package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeCall is one request received by the fake embeddings API.
type fakeCall struct {
	n      int
	req    embeddingRequest
	raw    map[string]any
	header http.Header
}

// fakeAPI is an httptest server speaking the OpenAI embeddings schema. Its
// handler decides, per call, how to answer; the default answers correctly.
type fakeAPI struct {
	*httptest.Server
	mu    sync.Mutex
	calls []fakeCall
}

type fakeHandler func(c fakeCall, w http.ResponseWriter, r *http.Request)

func newFakeAPI(t *testing.T, h fakeHandler) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		c := fakeCall{header: r.Header.Clone()}
		if err := json.Unmarshal(body, &c.req); err != nil {
			t.Errorf("request body: %v", err)
		}
		_ = json.Unmarshal(body, &c.raw)
		f.mu.Lock()
		c.n = len(f.calls)
		f.calls = append(f.calls, c)
		f.mu.Unlock()
		if h == nil {
			h = answer
		}
		h(c, w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) Calls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// fakeVector is the deterministic embedding the fake API returns for text.
func fakeVector(text string, dims int) []float32 {
	if dims == 0 {
		dims = 4
	}
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(crc32.ChecksumIEEE([]byte(fmt.Sprint(i, text))) % 10007)
	}
	return v
}

type fakeItem struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

func items(req embeddingRequest) []fakeItem {
	out := make([]fakeItem, len(req.Input))
	for i, text := range req.Input {
		out[i] = fakeItem{"embedding", i, fakeVector(text, req.Dimensions)}
	}
	return out
}

func writeItems(w http.ResponseWriter, req embeddingRequest, data []fakeItem) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)},
	})
}

func answer(c fakeCall, w http.ResponseWriter, _ *http.Request) {
	writeItems(w, c.req, items(c.req))
}

func writeAPIError(w http.ResponseWriter, status int, message, typ string, code any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": message, "type": typ, "param": nil, "code": code},
	})
}

func newTestClient(t *testing.T, endpoint string, mutate func(*OpenAIOptions)) *OpenAI {
	t.Helper()
	opts := OpenAIOptions{
		Endpoint: endpoint, Model: "test-embed", APIKeyEnv: "PARENTRAG_TEST_UNSET_KEY",
		BackoffBase: time.Millisecond, BackoffMax: 20 * time.Millisecond, Timeout: 5 * time.Second,
	}
	if mutate != nil {
		mutate(&opts)
	}
	c, err := NewOpenAI(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d", i)
	}
	return out
}

func checkVectors(t *testing.T, got [][]float32, inputs []string, dims int) {
	t.Helper()
	if len(got) != len(inputs) {
		t.Fatalf("%d vectors for %d inputs", len(got), len(inputs))
	}
	for i, v := range got {
		if !slices.Equal(v, fakeVector(inputs[i], dims)) {
			t.Fatalf("vector %d = %v, want %v", i, v, fakeVector(inputs[i], dims))
		}
	}
}

func embedDense(t *testing.T, c *OpenAI, in []string) ([][]float32, error) {
	t.Helper()
	vs, err := c.EmbedDocuments(context.Background(), in)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(vs))
	for i, v := range vs {
		if v.Sparse != nil {
			t.Fatalf("dense embedder returned a sparse vector")
		}
		out[i] = v.Dense
	}
	return out, nil
}

func TestOpenAIBatching(t *testing.T) {
	f := newFakeAPI(t, nil)
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.BatchSize = 3 })
	in := texts(10)
	got, err := embedDense(t, c, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, got, in, 0)
	calls := f.Calls()
	if len(calls) != 4 {
		t.Fatalf("%d requests, want 4", len(calls))
	}
	var sent []string
	for i, call := range calls {
		if want := min(3, 10-3*i); len(call.req.Input) != want {
			t.Errorf("request %d has %d inputs, want %d", i, len(call.req.Input), want)
		}
		sent = append(sent, call.req.Input...)
		if call.req.Model != "test-embed" || call.req.EncodingFormat != "float" {
			t.Errorf("request %d: model %q encoding_format %q", i, call.req.Model, call.req.EncodingFormat)
		}
		if _, ok := call.raw["dimensions"]; ok {
			t.Errorf("dimensions sent although 0")
		}
		if call.header.Get("Content-Type") != "application/json" {
			t.Errorf("content type %q", call.header.Get("Content-Type"))
		}
	}
	if !slices.Equal(sent, in) {
		t.Errorf("inputs sent %q, want %q", sent, in)
	}
}

func TestOpenAIDefaultBatchSize(t *testing.T) {
	f := newFakeAPI(t, nil)
	c := newTestClient(t, f.URL, nil)
	if _, err := embedDense(t, c, texts(DefaultOpenAIBatchSize+1)); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Calls()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func TestOpenAIConcurrentBatchesKeepOrder(t *testing.T) {
	var inFlight, peak atomic.Int32
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(10 * time.Millisecond)
		answer(c, w, r)
	})
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.BatchSize = 2; o.Concurrency = 4 })
	in := texts(15)
	got, err := embedDense(t, c, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, got, in, 0)
	if len(f.Calls()) != 8 || peak.Load() < 2 || peak.Load() > 4 {
		t.Fatalf("%d requests, peak concurrency %d", len(f.Calls()), peak.Load())
	}
}

func TestOpenAIOutOfOrderIndexes(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, _ *http.Request) {
		data := items(c.req)
		slices.Reverse(data)
		data[0], data[len(data)/2] = data[len(data)/2], data[0]
		writeItems(w, c.req, data)
	})
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.BatchSize = 5 })
	in := texts(12)
	got, err := embedDense(t, c, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, got, in, 0)
}

func TestOpenAIRetriesTooManyRequestsHonouringRetryAfter(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, r *http.Request) {
		if c.n == 0 {
			w.Header().Set("Retry-After", "0")
			writeAPIError(w, http.StatusTooManyRequests, "Rate limit reached", "requests", "rate_limit_exceeded")
			return
		}
		answer(c, w, r)
	})
	// A huge backoff base proves Retry-After: 0 replaced the backoff.
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.BackoffBase, o.BackoffMax = time.Hour, time.Hour })
	start := time.Now()
	in := texts(3)
	got, err := embedDense(t, c, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, got, in, 0)
	if n := len(f.Calls()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("took %v despite Retry-After: 0", time.Since(start))
	}
}

func TestOpenAIRetriesServerErrors(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, r *http.Request) {
		if c.n < 2 {
			writeAPIError(w, http.StatusInternalServerError, "The server had an error", "server_error", nil)
			return
		}
		answer(c, w, r)
	})
	c := newTestClient(t, f.URL, nil)
	in := texts(2)
	got, err := embedDense(t, c, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, got, in, 0)
	if n := len(f.Calls()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

func TestOpenAIRetriesDroppedConnections(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, r *http.Request) {
		if c.n == 0 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		answer(c, w, r)
	})
	c := newTestClient(t, f.URL, nil)
	in := texts(2)
	got, err := embedDense(t, c, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, got, in, 0)
}

func TestOpenAIGivesUpAfterMaxRetries(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, _ *http.Request) {
		writeAPIError(w, http.StatusServiceUnavailable, "overloaded", "server_error", nil)
	})
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.MaxRetries = 2 })
	_, err := embedDense(t, c, texts(1))
	if err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") || !strings.Contains(err.Error(), "503") {
		t.Fatalf("error %v", err)
	}
	if n := len(f.Calls()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

func TestOpenAINoRetriesWhenDisabled(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, _ *http.Request) {
		writeAPIError(w, http.StatusServiceUnavailable, "overloaded", "server_error", nil)
	})
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.MaxRetries = -1 })
	if _, err := embedDense(t, c, texts(1)); err == nil {
		t.Fatal("no error")
	}
	if n := len(f.Calls()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestOpenAIClientErrorSurfacedWithoutRetry(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, _ *http.Request) {
		writeAPIError(w, http.StatusBadRequest, "This model's maximum context length is 8192 tokens", "invalid_request_error", "context_length_exceeded")
	})
	c := newTestClient(t, f.URL, nil)
	_, err := embedDense(t, c, texts(1))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"400", "maximum context length is 8192 tokens", "invalid_request_error", "context_length_exceeded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "context_length_exceeded" {
		t.Errorf("errors.As APIError: %#v", apiErr)
	}
	if n := len(f.Calls()); n != 1 {
		t.Fatalf("%d requests, want 1 (no retry on 400)", n)
	}
}

func TestOpenAINonJSONErrorBody(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "<html>\n<body>Access   denied by proxy</body></html>")
	})
	c := newTestClient(t, f.URL, nil)
	_, err := embedDense(t, c, texts(1))
	if err == nil || !strings.Contains(err.Error(), "http 403 forbidden: <html> <body>Access denied by proxy</body></html>") {
		t.Fatalf("error %v", err)
	}
}

func TestOpenAITimeout(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.Timeout = 50 * time.Millisecond; o.MaxRetries = 1 })
	start := time.Now()
	_, err := embedDense(t, c, texts(1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want deadline exceeded", err)
	}
	if n := len(f.Calls()); n != 2 {
		t.Errorf("%d requests, want 2 (timeouts are retried)", n)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestOpenAIContextCancelled(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	c := newTestClient(t, f.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.EmbedDocuments(ctx, texts(3))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
	if n := len(f.Calls()); n != 1 {
		t.Errorf("%d requests, want 1 (no retry once ctx ended)", n)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := c.EmbedQuery(ctx, "q"); !errors.Is(err, context.Canceled) {
		t.Fatalf("EmbedQuery error %v", err)
	}
}

func TestOpenAIContextCancelledDuringBackoff(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "30")
		writeAPIError(w, http.StatusServiceUnavailable, "overloaded", "server_error", nil)
	})
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.BackoffMax = time.Minute })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.EmbedDocuments(ctx, texts(1))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestOpenAIBadJSON(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"object":"list","data":[{"index":0,"embedding":[1,2`)
	})
	c := newTestClient(t, f.URL, nil)
	_, err := embedDense(t, c, texts(1))
	if err == nil || !strings.Contains(err.Error(), "decode response") {
		t.Fatalf("error %v", err)
	}
	if n := len(f.Calls()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestOpenAIMalformedResponses(t *testing.T) {
	tests := []struct {
		name   string
		mutate func([]fakeItem) []fakeItem
		want   string
	}{
		{"too few", func(d []fakeItem) []fakeItem { return d[:2] }, "lacks index 2: 2 embeddings for 3 inputs"},
		{"missing middle", func(d []fakeItem) []fakeItem { return []fakeItem{d[0], d[2]} }, "lacks index 1"},
		{"too many", func(d []fakeItem) []fakeItem { return append(d, fakeItem{Index: 3, Embedding: []float32{1}}) }, "index 3 out of range"},
		{"duplicate", func(d []fakeItem) []fakeItem { d[1].Index = 0; return d }, "repeats index 0"},
		{"negative", func(d []fakeItem) []fakeItem { d[1].Index = -1; return d }, "index -1 out of range"},
		{"empty embedding", func(d []fakeItem) []fakeItem { d[1].Embedding = nil; return d }, "embedding 1 is empty"},
		{"ragged", func(d []fakeItem) []fakeItem { d[2].Embedding = d[2].Embedding[:2]; return d }, "embedding 2 has 2 dimensions, want 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, _ *http.Request) {
				writeItems(w, c.req, tt.mutate(items(c.req)))
			})
			c := newTestClient(t, f.URL, nil)
			_, err := embedDense(t, c, texts(3))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestOpenAIInconsistentDimensionsAcrossBatches(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, _ *http.Request) {
		c.req.Dimensions = 4 + c.n
		writeItems(w, c.req, items(c.req))
	})
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.BatchSize = 2 })
	if _, err := embedDense(t, c, texts(4)); err == nil || !strings.Contains(err.Error(), "inconsistent dimensions") {
		t.Fatalf("error %v", err)
	}
}

func TestOpenAIDimensionsForwarded(t *testing.T) {
	f := newFakeAPI(t, nil)
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.Dimensions = 8 })
	in := texts(2)
	got, err := embedDense(t, c, in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, got, in, 8)
	if d := f.Calls()[0].raw["dimensions"]; d != float64(8) {
		t.Fatalf("dimensions sent %v", d)
	}
	q, err := c.EmbedQuery(context.Background(), "q")
	if err != nil || len(q.Dense) != 8 {
		t.Fatalf("query %v, %v", q, err)
	}
}

func TestOpenAIDimensionsMismatch(t *testing.T) {
	f := newFakeAPI(t, func(c fakeCall, w http.ResponseWriter, _ *http.Request) {
		c.req.Dimensions = 0 // server ignores dimensions
		writeItems(w, c.req, items(c.req))
	})
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.Dimensions = 8 })
	if _, err := embedDense(t, c, texts(1)); err == nil || !strings.Contains(err.Error(), "has 4 dimensions, want 8") {
		t.Fatalf("error %v", err)
	}
}

func TestOpenAIAuthHeader(t *testing.T) {
	f := newFakeAPI(t, nil)
	t.Setenv("OPENAI_API_KEY", "sk-default")
	t.Setenv("PARENTRAG_TEST_KEY", "sk-custom")
	tests := []struct {
		name   string
		mutate func(*OpenAIOptions)
		want   string
	}{
		{"default env", func(o *OpenAIOptions) { o.APIKeyEnv = "" }, "Bearer sk-default"},
		{"named env", func(o *OpenAIOptions) { o.APIKeyEnv = "PARENTRAG_TEST_KEY" }, "Bearer sk-custom"},
		{"explicit key", func(o *OpenAIOptions) { o.APIKey = "sk-explicit" }, "Bearer sk-explicit"},
		{"no key", nil, ""},
	}
	for i, tt := range tests {
		c := newTestClient(t, f.URL, tt.mutate)
		if _, err := c.EmbedQuery(context.Background(), "q"); err != nil {
			t.Fatal(err)
		}
		if got := f.Calls()[i].header.Get("Authorization"); got != tt.want {
			t.Errorf("%s: Authorization %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestOpenAIPrefixes(t *testing.T) {
	f := newFakeAPI(t, nil)
	c := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.DocumentPrefix, o.QueryPrefix = "passage: ", "query: " })
	got, err := embedDense(t, c, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, got, []string{"passage: a"}, 0)
	q, _ := c.EmbedQuery(context.Background(), "b")
	if !slices.Equal(q.Dense, fakeVector("query: b", 0)) {
		t.Fatal("query prefix not applied")
	}
}

func TestOpenAIEmptyInputMakesNoRequest(t *testing.T) {
	f := newFakeAPI(t, nil)
	c := newTestClient(t, f.URL, nil)
	vs, err := c.EmbedDocuments(context.Background(), nil)
	if err != nil || len(vs) != 0 || len(f.Calls()) != 0 {
		t.Fatalf("got %v, %v, %d calls", vs, err, len(f.Calls()))
	}
}

func TestOpenAIEndpointRule(t *testing.T) {
	tests := map[string]string{
		"https://api.openai.com":          "https://api.openai.com/v1/embeddings",
		"https://api.openai.com/":         "https://api.openai.com/v1/embeddings",
		"https://api.openai.com/v1":       "https://api.openai.com/v1/embeddings",
		"https://api.openai.com/v1/":      "https://api.openai.com/v1/embeddings",
		"http://vllm:8000/proxy/v1":       "http://vllm:8000/proxy/v1/embeddings",
		"http://gateway.local/openai":     "http://gateway.local/openai/v1/embeddings",
		"http://gateway.local/openai/v10": "http://gateway.local/openai/v10/v1/embeddings",
	}
	for in, want := range tests {
		got, err := embeddingsURL(in)
		if err != nil || got != want {
			t.Errorf("embeddingsURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "api.openai.com", "ftp://x", "http://", "http://x/v1?a=b", "://"} {
		if _, err := embeddingsURL(bad); err == nil {
			t.Errorf("embeddingsURL(%q) accepted", bad)
		}
	}
}

func TestNewOpenAIValidation(t *testing.T) {
	if _, err := NewOpenAI(OpenAIOptions{Endpoint: "http://x"}); err == nil {
		t.Error("missing model accepted")
	}
	if _, err := NewOpenAI(OpenAIOptions{Endpoint: "http://x", Model: "m", BatchSize: -1}); err == nil {
		t.Error("negative batch size accepted")
	}
	c, err := NewOpenAI(OpenAIOptions{Endpoint: "http://x/v1", Model: "m"})
	if err != nil || c.URL() != "http://x/v1/embeddings" {
		t.Fatalf("%v, %v", c, err)
	}
	o := c.opts
	if o.BatchSize != 64 || o.MaxRetries != 5 || o.Timeout != 30*time.Second || o.APIKeyEnv != "OPENAI_API_KEY" || o.Concurrency != 1 {
		t.Errorf("defaults not applied: %+v", o)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{nil, 0, false},
		{map[string]string{"Retry-After": "0"}, 0, true},
		{map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		{map[string]string{"Retry-After": "-3"}, 0, false},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": now.Add(10 * time.Second).Format(http.TimeFormat)}, 10 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		got, ok := parseRetryAfter(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%v) = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRetryDelayBackoff(t *testing.T) {
	c := newTestClient(t, "http://x", func(o *OpenAIOptions) { o.BackoffBase, o.BackoffMax = 100*time.Millisecond, time.Second })
	plain := errors.New("x")
	for attempt, ceiling := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		ceiling *= time.Millisecond
		for range 50 {
			d := c.retryDelay(attempt, plain)
			if d < ceiling/2 || d > ceiling {
				t.Fatalf("attempt %d: delay %v outside [%v, %v]", attempt, d, ceiling/2, ceiling)
			}
		}
	}
	if d := c.retryDelay(100, plain); d < 500*time.Millisecond || d > time.Second {
		t.Fatalf("large attempt delay %v", d)
	}
	capped := &APIError{StatusCode: 429, RetryAfter: time.Hour, HasRetryAfter: true}
	if d := c.retryDelay(0, capped); d != time.Second {
		t.Fatalf("Retry-After not capped: %v", d)
	}
}
