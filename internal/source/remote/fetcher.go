package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// Fetcher fetches sources, keeping the last Result per URL so that an
// unchanged source costs a conditional request answered 304 (If-None-Match
// with the ETag, If-Modified-Since with Last-Modified), and, within
// MinInterval of the last answer, no request at all. A stored result is
// reused only for the same source name and spec (apart from Header,
// TempDir and Timeout). Failed fetches keep the stored result and are not throttled.
// The zero value is ready to use; a Fetcher is safe for concurrent use,
// and concurrent fetches of one URL run one after the other so the later
// ones can reuse the first.
type Fetcher struct {
	// Client makes the requests; nil means a client with connection, TLS
	// and response-header timeouts (see Spec.Timeout).
	Client *http.Client
	// MinInterval, when positive, is how long a stored result is returned
	// without asking the server.
	MinInterval time.Duration
	// Now tells the time; nil means time.Now.
	Now func() time.Time
	// Lean keeps and returns no documents, only their count, errors and
	// version: for a caller that needs to know what the content is, not
	// to index it, and must not hold it in memory.
	Lean bool

	mu      sync.Mutex
	entries map[string]*cacheEntry // by URL
}

// cacheEntry is the stored result of one URL.
type cacheEntry struct {
	lock chan struct{} // holds a value for the whole fetch of the URL
	// mu guards the fields below, which a Memory that needs room may
	// clear (drop) during another fetch.
	mu      sync.Mutex
	key     string // source name and spec the result was made for
	result  Result
	checked time.Time // when the server last vouched for result
	stored  bool
}

// Fetch returns the source's documents like the package's Fetch, reusing
// the stored result when the server answers 304 or MinInterval has not
// passed (Result.Cached is then true; Bytes is the original download's).
// The returned slices are copies; document metadata maps are shared.
func (f *Fetcher) Fetch(ctx context.Context, name string, spec Spec) (Result, error) {
	e := f.entry(spec.URL)
	// Waiting for another fetch of the URL ends with the caller's context;
	// the other fetch holds the lock at most its Timeout.
	select {
	case e.lock <- struct{}{}:
	case <-ctx.Done():
		return Result{}, fmt.Errorf("remote source %s: waiting for another fetch of it: %w", redactRaw(spec.URL), context.Cause(ctx))
	}
	defer func() { <-e.lock }()
	key, now := cacheKey(name, spec), f.now()
	since, recent := e.validators(key, now, f.MinInterval)
	if recent {
		if res, ok := e.cached(); ok {
			return res, nil
		}
		since = Version{}
	}
	res, notModified, err := fetch(ctx, f.Client, name, spec, since, f.Lean)
	if err != nil {
		return Result{}, err
	}
	if notModified {
		if res, ok := e.cached(); ok {
			e.vouched(now)
			return res, nil
		}
		// Dropped while the server was asked: read it whole.
		if res, _, err = fetch(ctx, f.Client, name, spec, Version{}, f.Lean); err != nil {
			return Result{}, err
		}
	}
	e.store(key, res, now)
	return copyResult(res), nil
}

// Forget drops the stored result of a URL, for a source that is gone.
func (f *Fetcher) Forget(url string) {
	f.mu.Lock()
	e := f.entries[url]
	delete(f.entries, url)
	f.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		hold := e.result.hold
		e.mu.Unlock()
		hold.unkeep()
	}
}

// entry returns the URL's cache entry, creating it.
func (f *Fetcher) entry(url string) *cacheEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.entries == nil {
		f.entries = map[string]*cacheEntry{}
	}
	e := f.entries[url]
	if e == nil {
		e = &cacheEntry{lock: make(chan struct{}, 1)}
		f.entries[url] = e
	}
	return e
}

// now is the Fetcher's clock.
func (f *Fetcher) now() time.Time {
	if f.Now == nil {
		return time.Now()
	}
	return f.Now()
}

// validators returns what to ask the server with for a fetch of key at
// now (the stored version, when the stored result was made for key), and
// whether the stored result is recent enough to return without asking.
func (e *cacheEntry) validators(key string, now time.Time, minInterval time.Duration) (Version, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stored || e.key != key {
		return Version{}, false
	}
	return e.result.Version, minInterval > 0 && now.Sub(e.checked) < minInterval
}

// cached is a copy of the stored result, marked as cached, and whether
// there still is one: a Memory may have dropped it.
func (e *cacheEntry) cached() (Result, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stored {
		return Result{}, false
	}
	return e.result.Reuse()
}

// vouched records that the server vouched for the stored result at now.
func (e *cacheEntry) vouched(now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.checked = now
}

// store keeps res as the result of key, vouched for at now, in place of
// the result stored before; its documents are kept until a Memory needs
// the room.
func (e *cacheEntry) store(key string, res Result, now time.Time) {
	e.mu.Lock()
	old := e.result.hold
	e.key, e.result, e.stored, e.checked = key, res, true, now
	e.mu.Unlock()
	if old != res.hold {
		old.unkeep()
	}
	res.KeepIn(func() { e.drop(res.hold) })
}

// drop forgets the stored result if it still is the one of hold.
func (e *cacheEntry) drop(hold *Hold) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.result.hold == hold {
		e.result, e.stored = Result{}, false
	}
}

// copyResult copies a result's slices so callers cannot change the store.
func copyResult(r Result) Result {
	r.Documents, r.Errors = slices.Clone(r.Documents), slices.Clone(r.Errors)
	return r
}

// cacheKey identifies what a result depends on besides the content: the
// source name and every spec field but Header, TempDir and Timeout.
func cacheKey(name string, spec Spec) string {
	spec.Header, spec.TempDir, spec.Timeout = nil, "", 0
	b, _ := json.Marshal(struct {
		Name string
		Spec Spec
	}{name, spec})
	return string(b)
}

// redactRaw is redact of a raw URL, or a placeholder when it does not parse.
func redactRaw(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return redact(u)
}
