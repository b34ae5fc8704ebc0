package embed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// Defaults applied by NewOpenAI to zero-valued OpenAIOptions fields.
const (
	DefaultOpenAIBatchSize   = 64
	DefaultOpenAIMaxRetries  = 5
	DefaultOpenAITimeout     = 30 * time.Second
	DefaultOpenAIAPIKeyEnv   = "OPENAI_API_KEY"
	DefaultOpenAIBackoffBase = 500 * time.Millisecond
	DefaultOpenAIBackoffMax  = 30 * time.Second
)

// Response size limits: a successful body larger than maxResponseBytes is an
// error; at most maxErrorBodyBytes of an error body are read.
const (
	maxResponseBytes  = 256 << 20
	maxErrorBodyBytes = 64 << 10
)

// OpenAIOptions configures an OpenAI-compatible embeddings client. Zero
// values select the documented defaults.
type OpenAIOptions struct {
	// Endpoint is the server's base URL (http or https). Trailing slashes are
	// ignored; then if the path ends in "/v1" requests go to
	// Endpoint+"/embeddings", otherwise to Endpoint+"/v1/embeddings". So
	// "https://api.openai.com", "https://api.openai.com/v1/" and
	// "http://vllm:8000/v1" all work.
	Endpoint string
	// Model is sent as "model"; it is required.
	Model string
	// Dimensions, when > 0, is sent as "dimensions" and every returned
	// embedding must have that length; 0 omits it.
	Dimensions int
	// BatchSize is the most inputs sent per request (default 64).
	BatchSize int
	// MaxRetries is how many times a failed request is retried (default 5;
	// negative disables retries). See OpenAI for what is retried.
	MaxRetries int
	// Timeout bounds each request attempt, body included (default 30s).
	Timeout time.Duration
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// APIKeyEnv names the environment variable read, once by NewOpenAI, for
	// the API key when APIKey is empty (default OPENAI_API_KEY). An empty or
	// unset variable sends no Authorization header (local servers).
	APIKeyEnv string
	// HTTPClient sends the requests (default: a new http.Client with the
	// default transport and no overall timeout).
	HTTPClient *http.Client
	// BackoffBase is the first retry delay, doubled per retry with jitter
	// (default 500ms); BackoffMax caps it and any Retry-After (default 30s).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// Concurrency is how many batch requests one EmbedDocuments call keeps
	// in flight (default 1).
	Concurrency int
	// DocumentPrefix and QueryPrefix are prepended to document and query
	// texts, for models trained with prefixes such as E5's "passage: " and
	// "query: ". Both default to empty.
	DocumentPrefix string
	QueryPrefix    string
}

// OpenAI embeds texts densely through an OpenAI-compatible
// POST /v1/embeddings API. It retries 429 and 5xx responses and transport
// errors (timeouts included) with exponential backoff and jitter, honouring
// Retry-After and retry-after-ms, up to MaxRetries times; other statuses fail
// at once with an *APIError carrying the API's error message. It is safe for
// concurrent use.
type OpenAI struct {
	url    string
	apiKey string
	client *http.Client
	opts   OpenAIOptions
}

var _ Embedder = (*OpenAI)(nil)

// NewOpenAI validates opts, applies the defaults, reads the API key and
// returns the client. It makes no request.
func NewOpenAI(opts OpenAIOptions) (*OpenAI, error) {
	u, err := embeddingsURL(opts.Endpoint)
	if err != nil {
		return nil, err
	}
	if opts.Model == "" {
		return nil, errors.New("openai embeddings: model is required")
	}
	if opts.Dimensions < 0 || opts.BatchSize < 0 || opts.Timeout < 0 ||
		opts.BackoffBase < 0 || opts.BackoffMax < 0 || opts.Concurrency < 0 {
		return nil, errors.New("openai embeddings: dimensions, batch size, timeout, backoff and concurrency must not be negative")
	}
	opts = withOpenAIDefaults(opts)
	c := &OpenAI{url: u, apiKey: opts.APIKey, client: opts.HTTPClient, opts: opts}
	if c.apiKey == "" {
		c.apiKey = os.Getenv(opts.APIKeyEnv)
	}
	return c, nil
}

// withOpenAIDefaults fills zero-valued options with the defaults.
func withOpenAIDefaults(o OpenAIOptions) OpenAIOptions {
	o.BatchSize = cmpOr(o.BatchSize, DefaultOpenAIBatchSize)
	o.MaxRetries = max(cmpOr(o.MaxRetries, DefaultOpenAIMaxRetries), 0)
	o.Timeout = cmpOr(o.Timeout, DefaultOpenAITimeout)
	o.APIKeyEnv = cmpOr(o.APIKeyEnv, DefaultOpenAIAPIKeyEnv)
	o.BackoffBase = cmpOr(o.BackoffBase, DefaultOpenAIBackoffBase)
	o.BackoffMax = cmpOr(o.BackoffMax, DefaultOpenAIBackoffMax)
	o.Concurrency = cmpOr(o.Concurrency, 1)
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	return o
}

// cmpOr returns v unless it is the zero value, in which case def.
func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// embeddingsURL applies the endpoint rule documented on OpenAIOptions.
func embeddingsURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("openai embeddings: invalid endpoint: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("openai embeddings: endpoint %q must be an absolute http or https url", endpoint)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("openai embeddings: endpoint %q must not have a query or fragment", endpoint)
	}
	base := strings.TrimRight(u.String(), "/")
	if strings.HasSuffix(base, "/v1") {
		return base + "/embeddings", nil
	}
	return base + "/v1/embeddings", nil
}

// URL returns the embeddings URL requests are posted to.
func (c *OpenAI) URL() string {
	return c.url
}

// EmbedDocuments returns one dense vector per text, in input order, sending
// batches of at most BatchSize texts (each with DocumentPrefix). Every vector
// has the same length, Dimensions when set. On any failed batch it returns an
// error and no vectors.
func (c *OpenAI) EmbedDocuments(ctx context.Context, texts []string) ([]vector.Vector, error) {
	out := make([]vector.Vector, len(texts))
	batches := (len(texts) + c.opts.BatchSize - 1) / c.opts.BatchSize
	err := runBatches(ctx, batches, c.opts.Concurrency, func(ctx context.Context, i int) error {
		lo := i * c.opts.BatchSize
		hi := min(lo+c.opts.BatchSize, len(texts))
		vecs, err := c.embedBatch(ctx, withPrefix(c.opts.DocumentPrefix, texts[lo:hi]))
		for j, v := range vecs {
			out[lo+j] = vector.Vector{Dense: v}
		}
		return err
	})
	if err == nil {
		err = checkSameLength(out)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EmbedQuery returns the dense vector of QueryPrefix+text.
func (c *OpenAI) EmbedQuery(ctx context.Context, text string) (vector.Vector, error) {
	vecs, err := c.embedBatch(ctx, []string{c.opts.QueryPrefix + text})
	if err != nil {
		return vector.Vector{}, err
	}
	return vector.Vector{Dense: vecs[0]}, nil
}

// withPrefix returns texts with prefix prepended, or texts itself.
func withPrefix(prefix string, texts []string) []string {
	if prefix == "" {
		return texts
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = prefix + t
	}
	return out
}

// checkSameLength verifies that all vectors, from every batch, share one
// dimension.
func checkSameLength(vecs []vector.Vector) error {
	for i := range vecs {
		if len(vecs[i].Dense) != len(vecs[0].Dense) {
			return fmt.Errorf("openai embeddings: inconsistent dimensions across batches: input 0 has %d, input %d has %d",
				len(vecs[0].Dense), i, len(vecs[i].Dense))
		}
	}
	return nil
}

// runBatches calls fn for batch indexes [0, n) on up to workers goroutines,
// stopping at the first error, which it returns (or ctx's error when ctx ended
// before every batch was run).
func runBatches(ctx context.Context, n, workers int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	work := func() {
		for ctx.Err() == nil {
			i := int(next.Add(1)) - 1
			if i >= n {
				return
			}
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err })
				cancel()
			}
		}
	}
	var wg sync.WaitGroup
	for range min(workers, n) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if first != nil {
		return first
	}
	if next.Load() < int64(n) {
		return fmt.Errorf("openai embeddings: %w", ctx.Err())
	}
	return nil
}
