package remote

import (
	"errors"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestFetcherReusesResultOn304(t *testing.T) {
	for _, tt := range []struct {
		name, etag, lastModified, header, want string
	}{
		{"etag", `"v1"`, "", "If-None-Match", `"v1"`},
		{"last modified", "", "Mon, 02 Jan 2006 15:04:05 GMT", "If-Modified-Since", "Mon, 02 Jan 2006 15:04:05 GMT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &served{body: tarGz(t, regular("a.md", "# A")), etag: tt.etag, lastModified: tt.lastModified}
			srv := serve(t, s)
			f := &Fetcher{}
			spec := Spec{URL: srv.URL + "/a.tgz"}
			first, err := f.Fetch(t.Context(), "s", spec)
			if err != nil || first.Cached {
				t.Fatalf("first fetch: %+v %v", first, err)
			}
			second, err := f.Fetch(t.Context(), "s", spec)
			if err != nil || !second.Cached {
				t.Fatalf("second fetch: cached %v, err %v", second.Cached, err)
			}
			if got := s.last().Header.Get(tt.header); got != tt.want || s.hits() != 2 {
				t.Errorf("%s %q after %d requests, want %q after 2", tt.header, got, s.hits(), tt.want)
			}
			second.Cached = false
			if !reflect.DeepEqual(second, first) {
				t.Errorf("reused %+v, want %+v", second, first)
			}
		})
	}
}

func TestFetcherFetchesChangedContent(t *testing.T) {
	s := &served{body: tarGz(t, regular("a.md", "# A")), etag: `"v1"`}
	srv := serve(t, s)
	f := &Fetcher{}
	spec := Spec{URL: srv.URL + "/a.tgz"}
	if _, err := f.Fetch(t.Context(), "s", spec); err != nil {
		t.Fatal(err)
	}
	s.set(tarGz(t, regular("b.md", "# B")), `"v2"`, "")
	res, err := f.Fetch(t.Context(), "s", spec)
	if err != nil || res.Cached || !reflect.DeepEqual(ids(res.Documents), []string{"s/b.md"}) || res.Version.ETag != `"v2"` {
		t.Errorf("after a change: %+v %v", res, err)
	}
}

func TestFetcherSpecChangeIsNotConditional(t *testing.T) {
	s := &served{body: tarGz(t, regular("a.md", "# A", "b.txt", "b")), etag: `"v1"`}
	srv := serve(t, s)
	f := &Fetcher{}
	if _, err := f.Fetch(t.Context(), "s", Spec{URL: srv.URL + "/a.tgz"}); err != nil {
		t.Fatal(err)
	}
	res, err := f.Fetch(t.Context(), "s", Spec{URL: srv.URL + "/a.tgz", Include: []string{"*.txt"}})
	if err != nil || res.Cached || !reflect.DeepEqual(ids(res.Documents), []string{"s/b.txt"}) {
		t.Errorf("new include: %+v %v", res, err)
	}
	if got := s.last().Header.Get("If-None-Match"); got != "" {
		t.Errorf("If-None-Match %q sent for a different spec", got)
	}
}

func TestFetcherMinInterval(t *testing.T) {
	s := &served{body: []byte("# A"), etag: `"v1"`}
	srv := serve(t, s)
	now := time.Unix(1700000000, 0)
	f := &Fetcher{MinInterval: time.Minute, Now: func() time.Time { return now }}
	spec := Spec{URL: srv.URL + "/a.md"}
	fetch := func() Result {
		t.Helper()
		res, err := f.Fetch(t.Context(), "s", spec)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	fetch()
	now = now.Add(59 * time.Second)
	if res := fetch(); !res.Cached || s.hits() != 1 {
		t.Errorf("within the interval: cached %v after %d requests, want no request", res.Cached, s.hits())
	}
	now = now.Add(2 * time.Second)
	if res := fetch(); !res.Cached || s.hits() != 2 {
		t.Errorf("after the interval: cached %v after %d requests, want a 304", res.Cached, s.hits())
	}
	now = now.Add(59 * time.Second) // the 304 restarted the interval
	if fetch(); s.hits() != 2 {
		t.Errorf("%d requests, want the 304 to count as the last answer", s.hits())
	}
}

func TestFetcherRetriesFailuresAtOnce(t *testing.T) {
	fail := true
	var mu sync.Mutex
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("# A"))
	}))
	f := &Fetcher{MinInterval: time.Hour}
	spec := Spec{URL: srv.URL + "/a.md"}
	var se *StatusError
	if _, err := f.Fetch(t.Context(), "s", spec); !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("err %v, want 503", err)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if res, err := f.Fetch(t.Context(), "s", spec); err != nil || len(res.Documents) != 1 {
		t.Errorf("retry: %+v %v", res, err)
	}
}

func TestFetcherConcurrentFetchesShareOneDownload(t *testing.T) {
	s := &served{body: tarGz(t, regular("a.md", "# A")), etag: `"v1"`}
	srv := serve(t, s)
	f := &Fetcher{MinInterval: time.Hour}
	spec := Spec{URL: srv.URL + "/a.tgz"}
	var wg sync.WaitGroup
	results := make([]Result, 16)
	for i := range results {
		wg.Go(func() {
			res, err := f.Fetch(t.Context(), "s", spec)
			if err != nil {
				t.Error(err)
			}
			res.Documents[0].Title = "changed by a caller"
			results[i] = res
		})
	}
	wg.Wait()
	if s.hits() != 1 {
		t.Errorf("%d requests, want 1", s.hits())
	}
	if res, _ := f.Fetch(t.Context(), "s", spec); res.Documents[0].Title != "A" {
		t.Errorf("a caller changed the stored result: %q", res.Documents[0].Title)
	}
}

func TestFetcherForget(t *testing.T) {
	s := &served{body: []byte("# A"), etag: `"v1"`}
	srv := serve(t, s)
	f := &Fetcher{MinInterval: time.Hour}
	spec := Spec{URL: srv.URL + "/a.md"}
	for range 2 {
		if _, err := f.Fetch(t.Context(), "s", spec); err != nil {
			t.Fatal(err)
		}
		f.Forget(spec.URL)
	}
	if s.hits() != 2 || s.last().Header.Get("If-None-Match") != "" {
		t.Errorf("%d requests, last conditional %q: want 2 unconditional", s.hits(), s.last().Header.Get("If-None-Match"))
	}
}
