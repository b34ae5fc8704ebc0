package remote

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestProbeUsesHead(t *testing.T) {
	s := &served{body: []byte("# A"), etag: `"v7"`, lastModified: "Mon, 02 Jan 2006 15:04:05 GMT"}
	srv := serve(t, s)
	v, err := Probe(t.Context(), nil, Spec{URL: srv.URL + "/a.md", Checksum: "SHA256:" + "AB" + sha256Of(nil)[9:]})
	if err != nil {
		t.Fatal(err)
	}
	want := Version{ETag: `"v7"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT", Checksum: "sha256:ab" + sha256Of(nil)[9:]}
	if v != want {
		t.Errorf("version %+v, want %+v", v, want)
	}
	if s.hits() != 1 || s.last().Method != http.MethodHead {
		t.Errorf("%d requests, last %s: want one HEAD", s.hits(), s.last().Method)
	}
}

func TestProbeFallsBackToGetWithoutReadingTheBody(t *testing.T) {
	for _, refusal := range []int{http.StatusMethodNotAllowed, http.StatusNotImplemented, http.StatusForbidden} {
		abandoned := make(chan struct{})
		srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				w.WriteHeader(refusal)
				return
			}
			w.Header().Set("ETag", `"get"`)
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			for { // an endless body: Probe must not read it
				select {
				case <-r.Context().Done():
					close(abandoned)
					return
				case <-time.After(10 * time.Millisecond):
					if _, err := w.Write(make([]byte, 1<<10)); err != nil {
						close(abandoned)
						return
					}
				}
			}
		}))
		ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
		start := time.Now()
		v, err := Probe(ctx, nil, Spec{URL: srv.URL + "/a.tgz"})
		cancel()
		if err != nil || v.ETag != `"get"` {
			t.Fatalf("HEAD %d: version %+v err %v", refusal, v, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("HEAD %d: Probe took %v, as if it read the body", refusal, d)
		}
		select {
		case <-abandoned:
		case <-time.After(5 * time.Second):
			t.Fatalf("HEAD %d: the GET body was not closed", refusal)
		}
	}
}

func TestProbeStatusError(t *testing.T) {
	srv := serve(t, http.NotFoundHandler())
	_, err := Probe(t.Context(), nil, Spec{URL: srv.URL + "/a.tgz"})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound {
		t.Errorf("err %v, want a 404 StatusError", err)
	}
}
