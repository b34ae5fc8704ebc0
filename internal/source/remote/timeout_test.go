package remote

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// stallServer sends the first bytes of a body, then stalls until the test
// ends.
func stallServer(t *testing.T) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write([]byte("# A stalled file\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

func TestFetchTimesOutOnStalledBody(t *testing.T) {
	srv := stallServer(t)
	f := &Fetcher{}
	spec := Spec{URL: srv.URL + "/a.md", Timeout: 300 * time.Millisecond}
	for i := range 2 { // the second fetch of the URL must not wait on the first's lock
		start := time.Now()
		_, err := f.Fetch(context.Background(), "s", spec)
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timeout") {
			t.Fatalf("fetch %d: err %v, want a timeout", i, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("fetch %d took %s with a 300ms timeout", i, d)
		}
	}
}

func TestDefaultClientBoundsConnectionAndHeaders(t *testing.T) {
	tr, ok := defaultClient.Transport.(*http.Transport)
	if !ok || tr.ResponseHeaderTimeout <= 0 || tr.TLSHandshakeTimeout <= 0 || tr.DialContext == nil {
		t.Fatalf("default transport %+v lacks timeouts", defaultClient.Transport)
	}
	if s, err := (Spec{URL: "http://x/"}).settle(); err != nil || s.Timeout != DefaultTimeout {
		t.Errorf("default Timeout %v %v, want %v", s.Timeout, err, DefaultTimeout)
	}
	if _, err := (Spec{URL: "http://x/", Timeout: -1}).settle(); err == nil {
		t.Error("a negative timeout was accepted")
	}
}

// authEcho answers with 200 and records the Authorization it got.
type authEcho struct{ got chan string }

func (a authEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.got <- r.Header.Get("Authorization")
	w.Write([]byte("# Doc\n"))
}

func redirectTo(t *testing.T, target string) *httptest.Server {
	srv := httptest.NewServer(http.RedirectHandler(target, http.StatusFound))
	t.Cleanup(srv.Close)
	return srv
}

func TestRedirectToAnotherPortDropsCredentials(t *testing.T) {
	echo := authEcho{got: make(chan string, 4)}
	other := httptest.NewServer(echo) // 127.0.0.1, another port
	t.Cleanup(other.Close)
	from := redirectTo(t, other.URL+"/a.md")
	spec := Spec{URL: from.URL + "/a.md", Header: http.Header{"Authorization": {"Bearer secret"}}}
	if _, err := Fetch(t.Context(), nil, "s", spec); err != nil {
		t.Fatal(err)
	}
	if got := <-echo.got; got != "" {
		t.Errorf("the other port got Authorization %q", got)
	}
	// The same origin keeps it.
	same := httptest.NewServer(nil)
	t.Cleanup(same.Close)
	mux := http.NewServeMux()
	mux.Handle("/from", http.RedirectHandler("/to", http.StatusFound))
	mux.Handle("/to", echo)
	same.Config.Handler = mux
	if _, err := Fetch(t.Context(), nil, "s", Spec{URL: same.URL + "/from", Header: spec.Header}); err != nil {
		t.Fatal(err)
	}
	if got := <-echo.got; got != "Bearer secret" {
		t.Errorf("a redirect on the same origin lost Authorization: %q", got)
	}
}

func TestRedirectFromHTTPSToHTTPWithCredentialsIsRefused(t *testing.T) {
	echo := authEcho{got: make(chan string, 4)}
	plain := httptest.NewServer(echo)
	t.Cleanup(plain.Close)
	tls := httptest.NewTLSServer(http.RedirectHandler(plain.URL+"/a.md", http.StatusFound))
	t.Cleanup(tls.Close)
	c := tls.Client()
	_, err := Fetch(t.Context(), c, "s", Spec{URL: tls.URL + "/a.md", Header: http.Header{"Authorization": {"Basic dTpw"}}})
	if !errors.Is(err, ErrInsecureRedirect) {
		t.Fatalf("err %v, want ErrInsecureRedirect", err)
	}
	select {
	case got := <-echo.got:
		t.Fatalf("the clear-text server was asked (Authorization %q)", got)
	default:
	}
	// Without credentials the redirect is followed.
	if _, err := Fetch(t.Context(), c, "s", Spec{URL: tls.URL + "/a.md"}); err != nil {
		t.Errorf("without credentials: %v", err)
	}
	if c.CheckRedirect != nil {
		t.Error("the caller's client was changed")
	}
}

// TestFetcherWaitEndsWithContext: a fetch waiting for another fetch of the
// same URL gives up when its own context ends.
func TestFetcherWaitEndsWithContext(t *testing.T) {
	srv := stallServer(t)
	f := &Fetcher{}
	spec := Spec{URL: srv.URL + "/a.md", Timeout: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { _, err := f.Fetch(ctx, "s", spec); first <- err }()
	time.Sleep(200 * time.Millisecond) // the first fetch holds the URL's lock
	waitCtx, waitCancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer waitCancel()
	start := time.Now()
	_, err := f.Fetch(waitCtx, "s", spec)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("waiting fetch: %v after %s, want its deadline", err, time.Since(start))
	}
	cancel()
	select {
	case err := <-first:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("first fetch: %v, want canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first fetch did not end with its context")
	}
}
