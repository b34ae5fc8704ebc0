package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// protocolQueries are asked of every protocol: each must answer the
// parents /v1/retrieve answers.
var protocolQueries = []string{"tomatoes", "rollback revision", "sailing upwind reef", "compost soil"}

// retrieveFor posts body to /v1/retrieve and returns its answer.
func retrieveFor(t testing.TB, c *http.Client, base, body string) RetrieveResponse {
	t.Helper()
	return postFor[RetrieveResponse](t, c, base+"/v1/retrieve", body)
}

// postFor posts body to url and decodes its 200 answer strictly.
func postFor[T any](t testing.TB, c *http.Client, url, body string) T {
	t.Helper()
	code, data := doJSON(t, c, "POST", url, body)
	if code != http.StatusOK {
		t.Fatalf("%s %s: %d %s", url, body, code, data)
	}
	var resp T
	decodeStrict(t, data, &resp)
	return resp
}

// mustJSON encodes v, failing the test on error.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// heldServer is a server of one query slot and no queue whose first
// retrieval holds its slot until release is called, so that every other
// request is refused by admission control.
type heldServer struct {
	*Server
	release func()
}

// newHeldServer starts the holding retrieval through /v1/retrieve of ts
// (made by serve) and returns once it holds the slot.
func newHeldServer(t *testing.T, opts Options, serve func(*Server) string) *heldServer {
	t.Helper()
	opts.MaxInFlight, opts.MaxQueued, opts.ShutdownDelay = 1, -1, -1
	s := New(opts)
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	hold, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.beforeRetrieve = func(context.Context) { once.Do(func() { close(held); <-hold }) }
	base := serve(s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.Post(base+"/v1/retrieve", "application/json", strings.NewReader(`{"query": "tomatoes"}`)); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the holding retrieval never started")
	}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(hold); <-done }) }
	t.Cleanup(release)
	return &heldServer{Server: s, release: release}
}

// assertSameParents fails unless got lists the parents of want, in order,
// with their scores and texts.
func assertSameParents(t testing.TB, what string, got, want []retrieve.Result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d parents, /v1/retrieve %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ParentID != w.ParentID || g.DocID != w.DocID || g.Score != w.Score || g.Text != w.Text {
			t.Errorf("%s: parent %d is %s/%s %.4f, /v1/retrieve has %s/%s %.4f", what, i, g.DocID, g.ParentID, g.Score, w.DocID, w.ParentID, w.Score)
		}
	}
}

// metricCount returns the request count /metrics reports for endpoint
// and code, as its text.
func metricLine(t testing.TB, c *http.Client, base, endpoint, code string) string {
	t.Helper()
	_, data := do(t, c, "GET", base+"/metrics", "")
	prefix := `parentrag_request_duration_seconds_count{code="` + code + `",endpoint="` + endpoint + `"} `
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimPrefix(line, prefix)
		}
	}
	return ""
}
