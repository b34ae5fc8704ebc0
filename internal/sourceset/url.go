package sourceset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/document"
	"github.com/parentrag/parentrag/internal/source/remote"
)

// DefaultURLInterval is how long a URL source's content is trusted
// without asking its server again.
const DefaultURLInterval = 10 * time.Minute

// Fetchers fetch URL sources, one remote.Fetcher per interval, so that an
// unchanged source costs nothing within its interval and a 304 after it.
// The zero value is ready; it is safe for concurrent use.
type Fetchers struct {
	// Client makes the requests; nil: remote's client with timeouts.
	Client *http.Client
	// Lean fetchers keep no documents, only what identifies them.
	Lean bool
	// Memory, when set, bounds the document text the reads and caches
	// of these fetchers hold (see remote.Memory), with any other Fetchers
	// sharing it; a read that finds it taken by others fails the Read,
	// to be tried again.
	Memory *remote.Memory
	// Timeout bounds one fetch of a URL source (connecting, waiting and
	// the whole download); zero means the environment variable
	// PARENTRAG_URL_TIMEOUT (a Go duration such as "2m"), else
	// remote.DefaultTimeout.
	Timeout time.Duration
	mu      sync.Mutex
	by      map[time.Duration]*remote.Fetcher
	// artifacts keep the last read of each sourceRef source.
	artifacts artifactCache
}

// fetcher returns the fetcher of an interval.
func (f *Fetchers) fetcher(interval time.Duration) *remote.Fetcher {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.by == nil {
		f.by = map[time.Duration]*remote.Fetcher{}
	}
	if f.by[interval] == nil {
		f.by[interval] = &remote.Fetcher{Client: f.Client, MinInterval: interval, Lean: f.Lean}
	}
	return f.by[interval]
}

// Forget makes the next read of every URL ask its server again.
func (f *Fetchers) Forget(urls ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fe := range f.by {
		for _, u := range urls {
			fe.Forget(u)
		}
	}
}

// timeoutEnv names the environment variable that sets the URL fetch
// timeout of Fetchers without one.
const timeoutEnv = "PARENTRAG_URL_TIMEOUT"

// timeout is the fetch timeout: Timeout, else $PARENTRAG_URL_TIMEOUT, else
// 0 (remote's default).
func (f *Fetchers) timeout() (time.Duration, error) {
	if f.Timeout != 0 {
		return f.Timeout, nil
	}
	v := os.Getenv(timeoutEnv)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration such as 2m", timeoutEnv, v)
	}
	return d, nil
}

// readURL reads a URL source: a whole-source failure and every rejected
// document are reported; the documents read are kept.
func (r *Reader) readURL(ctx context.Context, src v1alpha1.Source, set *Set) error {
	spec, err := r.urlSpec(ctx, src.URL)
	if err != nil {
		set.fail(src.Name, "", err.Error())
		return nil
	}
	interval := DefaultURLInterval
	if src.URL.Interval != nil {
		interval = src.URL.Interval.Duration
	}
	fetchers := r.Fetchers
	if fetchers == nil {
		fetchers = &Fetchers{}
	}
	if spec.Timeout, err = fetchers.timeout(); err != nil {
		set.fail(src.Name, "", err.Error())
		return nil
	}
	spec.Memory = fetchers.Memory
	res, err := fetchers.fetcher(interval).Fetch(ctx, src.Name, spec)
	if errors.Is(err, remote.ErrMemoryBusy) {
		return fmt.Errorf("source %s: %w", src.Name, err)
	}
	if err != nil {
		set.fail(src.Name, "", err.Error())
		return nil
	}
	set.held = append(set.held, res)
	for _, e := range res.Errors {
		set.fail(src.Name, e.Document, e.Message)
	}
	for _, d := range res.Documents {
		if set.add(src.Name, d) {
			set.fromURL[d.ID] = true
		}
	}
	if fetchers.Lean {
		set.Unkept += res.Count
	}
	set.urls = append(set.urls, urlIdentity(src, spec, res.Version))
	return nil
}

// urlIdentity is what determines a URL source's documents: its name, its
// spec (credentials aside), the sha256 of the content and the version of
// the readers that turn it into documents.
func urlIdentity(src v1alpha1.Source, spec remote.Spec, v remote.Version) string {
	spec.Header, spec.Timeout = nil, 0
	b, _ := json.Marshal(struct {
		Name     string
		Spec     remote.Spec
		Checksum string
		Readers  string
	}{src.Name, spec, v.Checksum, document.Version})
	return string(b)
}

// urlSpec turns the API's URL source into a fetch, with the credentials
// of its Secret.
func (r *Reader) urlSpec(ctx context.Context, u *v1alpha1.URLSource) (remote.Spec, error) {
	spec := remote.Spec{URL: u.URL, Include: u.Include, Exclude: u.Exclude, Checksum: u.Checksum, MaxFiles: u.MaxFiles}
	if u.MaxFileSize != nil {
		spec.MaxFileBytes = u.MaxFileSize.Value()
	}
	if u.MaxTotalSize != nil {
		spec.MaxTotalBytes = u.MaxTotalSize.Value()
	}
	if u.SecretRef == nil {
		return spec, nil
	}
	var secret corev1.Secret
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: u.SecretRef.Name}, &secret); err != nil {
		return spec, fmt.Errorf("reading Secret %s: %w", u.SecretRef.Name, err)
	}
	spec.Header = http.Header{}
	switch {
	case len(secret.Data["bearerToken"]) > 0:
		spec.Header.Set("Authorization", "Bearer "+string(secret.Data["bearerToken"]))
	case len(secret.Data["username"]) > 0:
		req, _ := http.NewRequest(http.MethodGet, u.URL, nil)
		req.SetBasicAuth(string(secret.Data["username"]), string(secret.Data["password"]))
		spec.Header.Set("Authorization", req.Header.Get("Authorization"))
	default:
		return spec, fmt.Errorf("Secret %s has neither bearerToken nor username and password", u.SecretRef.Name)
	}
	return spec, nil
}
