package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// newTestServer serves s with httptest until the test ends.
func newTestServer(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func TestRetrieveStatusCodes(t *testing.T) {
	s := New(Options{MaxBodyBytes: 1024})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)
	url := ts.URL + "/v1/retrieve"

	cases := []struct {
		name, method, body string
		code               int
		errPart            string
	}{
		{"ok", "POST", `{"query": "tomatoes"}`, 200, ""},
		{"all fields", "POST", `{"query": "revision", "maxParents": 20, "childTopK": 1000, "aggregation": "Sum", "budget": 50, "filter": {"docIdPrefix": "ops/"}}`, 200, ""},
		{"get", "GET", "", 405, "use POST"},
		{"put", "PUT", `{"query": "x"}`, 405, "use POST"},
		{"empty query", "POST", `{"query": ""}`, 400, "query is required"},
		{"blank query", "POST", `{"query": "  \n"}`, 400, "query is required"},
		{"no query", "POST", `{"maxParents": 2}`, 400, "query is required"},
		{"maxParents 0", "POST", `{"query": "x", "maxParents": 0}`, 400, "maxParents 0"},
		{"maxParents 21", "POST", `{"query": "x", "maxParents": 21}`, 400, "maxParents 21"},
		{"childTopK 0", "POST", `{"query": "x", "childTopK": 0}`, 400, "childTopK 0"},
		{"childTopK 1001", "POST", `{"query": "x", "childTopK": 1001}`, 400, "childTopK 1001"},
		{"aggregation", "POST", `{"query": "x", "aggregation": "max"}`, 400, `aggregation "max"`},
		{"budget", "POST", `{"query": "x", "budget": -1}`, 400, "budget -1"},
		{"bad json", "POST", `{"query": `, 400, "invalid request body"},
		{"wrong type", "POST", `{"query": 3}`, 400, "invalid request body"},
		{"unknown field", "POST", `{"query": "x", "topK": 3}`, 400, `unknown field "topK"`},
		{"unknown filter field", "POST", `{"query": "x", "filter": {"doc": "a"}}`, 400, "unknown field"},
		{"trailing data", "POST", `{"query": "x"} {"query": "y"}`, 400, "trailing data"},
		{"empty body", "POST", ``, 400, "empty request body"},
		{"too large", "POST", `{"query": "` + strings.Repeat("word ", 300) + `"}`, 413, "over 1024 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := do(t, ts.Client(), c.method, url, c.body)
			if code != c.code {
				t.Fatalf("%s %s: %d %s, want %d", c.method, c.body, code, body, c.code)
			}
			if c.code == 200 {
				return
			}
			var e ErrorResponse
			decodeStrict(t, body, &e)
			if !strings.Contains(e.Error, c.errPart) {
				t.Errorf("error %q, want it to mention %q", e.Error, c.errPart)
			}
		})
	}
}

func TestRetrieveNotReady(t *testing.T) {
	ts := newTestServer(t, New(Options{}))
	code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "tomatoes"}`)
	var e ErrorResponse
	decodeStrict(t, body, &e)
	if code != 503 || e.Error == "" {
		t.Fatalf("before a bundle: %d %s, want 503", code, body)
	}
	code, _ = do(t, ts.Client(), "GET", ts.URL+"/nowhere", "")
	if code != 404 {
		t.Errorf("unknown path: %d, want 404", code)
	}
}

func TestRetrieveResponse(t *testing.T) {
	b := openBundle(t, corpus(), "rev-a")
	s := New(Options{Defaults: retrieve.Options{MaxParents: 2, ChildTopK: 5}})
	s.SetBundle(b)
	ts := newTestServer(t, s)
	ctx := context.Background()

	cases := []struct {
		body string
		opts retrieve.Options
	}{
		{`{"query": "tomatoes basil sun"}`, retrieve.Options{MaxParents: 2, ChildTopK: 5}},
		{`{"query": "revision", "maxParents": 4, "childTopK": 2, "aggregation": "Mean"}`, retrieve.Options{MaxParents: 4, ChildTopK: 2, Aggregation: retrieve.AggregateMean}},
		{`{"query": "revision parents children", "budget": 60}`, retrieve.Options{MaxParents: 2, ChildTopK: 5, Budget: 60, Length: split.CodePoints}},
		{`{"query": "xylophone"}`, retrieve.Options{MaxParents: 2, ChildTopK: 5}},
	}
	for _, c := range cases {
		code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", c.body)
		if code != 200 {
			t.Fatalf("%s: %d %s", c.body, code, body)
		}
		if ct := strings.Contains(string(body), `"results":[`); !ct {
			t.Errorf("%s: results not a JSON list: %s", c.body, body)
		}
		var got RetrieveResponse
		decodeStrict(t, body, &got)
		var req RetrieveRequest
		json.Unmarshal([]byte(c.body), &req)
		want, err := b.Retriever.Retrieve(ctx, req.Query, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = []retrieve.Result{}
		}
		if got.Revision != "rev-a" || !reflect.DeepEqual(got.Results, want) {
			t.Errorf("%s:\n got %+v\nwant revision rev-a, %+v", c.body, got, want)
		}
	}
}

// matches reports whether a result's document passes f, reading metadata
// from the corpus.
func matches(f *Filter, docID string) bool {
	for _, d := range corpus() {
		if d.ID == docID {
			return f.matchesDoc(docID) && f.matchesMetadata(d.Metadata)
		}
	}
	return false
}

func TestRetrieveFilter(t *testing.T) {
	b := openBundle(t, corpus(), "rev-a")
	if b.Manifest.Parents > MaxMaxParents {
		t.Fatalf("corpus has %d parents: the unfiltered reference below needs at most %d", b.Manifest.Parents, MaxMaxParents)
	}
	s := New(Options{})
	s.SetBundle(b)
	ts := newTestServer(t, s)
	ctx := context.Background()
	all, err := b.Retriever.Retrieve(ctx, "old revision", retrieve.Options{MaxParents: MaxMaxParents, ChildTopK: MaxChildTopK})
	if err != nil {
		t.Fatal(err)
	}

	filters := []Filter{
		{DocID: "garden.md"},
		{DocIDPrefix: "ops/"},
		{Metadata: map[string]string{"team": "search"}},
		{Metadata: map[string]string{"lang": "en"}, DocIDPrefix: "ops/r"},
		{DocID: "ops/rollout.md", Metadata: map[string]string{"team": "search"}},
		{Metadata: map[string]string{"team": "platform"}},
		{DocID: "nope"},
	}
	if all[0].DocID == "garden.md" {
		t.Fatalf("garden.md ranks first unfiltered: the filters below would prove nothing")
	}
	for _, f := range filters {
		fj, _ := json.Marshal(f)
		body := fmt.Sprintf(`{"query": "old revision", "maxParents": 2, "childTopK": %d, "filter": %s}`, MaxChildTopK, fj)
		code, data := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", body)
		if code != 200 {
			t.Fatalf("%s: %d %s", body, code, data)
		}
		var got RetrieveResponse
		decodeStrict(t, data, &got)
		want := []retrieve.Result{}
		for _, r := range all {
			if matches(&f, r.DocID) && len(want) < 2 {
				want = append(want, r)
			}
		}
		if !reflect.DeepEqual(got.Results, want) {
			t.Errorf("filter %s:\n got %+v\nwant %+v", fj, got.Results, want)
		}
	}
}

func TestRetrieveFilterFindsLowRankedChildren(t *testing.T) {
	s := New(Options{})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)
	// With childTopK 1 the unfiltered search sees only the best child,
	// not from garden.md; the filtered one over-fetches until it has one.
	code, data := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve",
		`{"query": "old revision", "maxParents": 1, "childTopK": 1, "filter": {"docId": "garden.md"}}`)
	var got RetrieveResponse
	decodeStrict(t, data, &got)
	if code != 200 || len(got.Results) != 1 || got.Results[0].DocID != "garden.md" {
		t.Fatalf("%d %s, want the garden.md parent", code, data)
	}
}

func TestRetrieveFilterWithBudget(t *testing.T) {
	s := New(Options{})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)
	code, data := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve",
		`{"query": "revision parents", "maxParents": 3, "budget": 120, "filter": {"docIdPrefix": "ops/"}}`)
	if code != 200 {
		t.Fatalf("%d %s", code, data)
	}
	var got RetrieveResponse
	decodeStrict(t, data, &got)
	total := 0
	for _, r := range got.Results {
		total += split.CodePoints(r.Text)
		if !strings.HasPrefix(r.DocID, "ops/") {
			t.Errorf("result of %s passed the filter", r.DocID)
		}
	}
	if len(got.Results) == 0 || total > 120 {
		t.Errorf("%d results, %d code points under a budget of 120", len(got.Results), total)
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	s := New(Options{})
	ts := newTestServer(t, s)
	get := func(path string) (int, string) {
		code, body := do(t, ts.Client(), "GET", ts.URL+path, "")
		return code, string(body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz before a bundle: %d", code)
	}
	if code, _ := get("/readyz"); code != 503 {
		t.Errorf("/readyz before a bundle: %d", code)
	}
	if code, _ := do(t, ts.Client(), "POST", ts.URL+"/healthz", ""); code != 405 {
		t.Errorf("POST /healthz: %d", code)
	}
	b := openBundle(t, corpus(), "rev-a")
	s.SetBundle(b)
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz with a bundle: %d", code)
	}
	do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "tomatoes"}`)
	do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": ""}`)

	code, metrics := get("/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, series := range []string{
		`parentrag_request_duration_seconds_bucket{code="200",endpoint="/v1/retrieve",le="0.1"}`,
		`parentrag_request_duration_seconds_count{code="400",endpoint="/v1/retrieve"} 1`,
		`parentrag_request_duration_seconds_count{code="503",endpoint="/readyz"} 1`,
		`parentrag_request_errors_total{code="400",endpoint="/v1/retrieve"} 1`,
		`parentrag_request_errors_total{code="405",endpoint="/healthz"} 1`,
		`parentrag_loaded_revision_info{revision="rev-a"} 1`,
		fmt.Sprintf("parentrag_loaded_parents %d", b.Manifest.Parents),
		fmt.Sprintf("parentrag_loaded_children %d", b.Manifest.Children),
		fmt.Sprintf("parentrag_loaded_documents %d", b.Manifest.Documents),
		"go_goroutines",
	} {
		if !strings.Contains(metrics, series+"\n") && !strings.Contains(metrics, series+" ") {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	if strings.Contains(metrics, `parentrag_request_errors_total{code="200"`) {
		t.Error("a 200 counted as an error")
	}

	s.SetBundle(nil)
	if code, _ := get("/readyz"); code != 503 {
		t.Errorf("/readyz after the bundle is unset: %d", code)
	}
	if _, metrics := get("/metrics"); strings.Contains(metrics, "parentrag_loaded_revision_info{") {
		t.Error("revision info still reported with no bundle")
	}
}

func TestSharedRegistry(t *testing.T) {
	a := New(Options{})
	b := New(Options{Registry: a.opts.Registry})
	b.SetBundle(openBundle(t, corpus(), "rev-b"))
	ts := newTestServer(t, a)
	_, body := do(t, ts.Client(), "GET", ts.URL+"/metrics", "")
	if !strings.Contains(string(body), `parentrag_loaded_revision_info{revision="rev-b"} 1`) {
		t.Errorf("servers on one registry do not share series:\n%s", body)
	}
}

func TestRequestTimeout(t *testing.T) {
	s := New(Options{RequestTimeout: 20 * time.Millisecond})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	s.beforeRetrieve = func(ctx context.Context) { <-ctx.Done() }
	ts := newTestServer(t, s)
	code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "tomatoes"}`)
	if code != 504 || !strings.Contains(string(body), "timed out") {
		t.Fatalf("a retrieval past the timeout: %d %s, want 504", code, body)
	}
}

func TestSetBundleWhileServing(t *testing.T) {
	a, b := openBundle(t, corpus(), "rev-a"), openBundle(t, corpus()[:2], "rev-b")
	s := New(Options{})
	s.SetBundle(a)
	ts := newTestServer(t, s)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				code, body, err := send(ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "revision"}`)
				var got RetrieveResponse
				if err == nil {
					err = json.Unmarshal(body, &got)
				}
				if code != 200 || err != nil || (got.Revision != "rev-a" && got.Revision != "rev-b") {
					t.Errorf("during swaps: %d %s %v", code, body, err)
				}
			}
		})
	}
	for i := range 40 {
		s.SetBundle([]*bundle.Bundle{a, b}[i%2])
	}
	wg.Wait()
}

func TestServeDrainsInFlightRequests(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	started, release := make(chan struct{}), make(chan struct{})
	s.beforeRetrieve = func(context.Context) {
		close(started)
		<-release
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	type answer struct {
		code int
		body []byte
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		code, body, err := send(http.DefaultClient, "POST", "http://"+ln.Addr().String()+"/v1/retrieve", `{"query": "tomatoes"}`)
		answered <- answer{code, body, err}
	}()
	<-started
	cancel()
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	readyz := httptest.NewRecorder()
	s.Handler().ServeHTTP(readyz, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if readyz.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz while shutting down: %d, want 503", readyz.Code)
	}
	close(release)
	a := <-answered
	if a.err != nil || a.code != 200 || !strings.Contains(string(a.body), `"revision":"rev-a"`) {
		t.Errorf("the in-flight request got %d %s %v", a.code, a.body, a.err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after a graceful shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the in-flight request completed")
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("still accepting connections after shutdown")
	}
}

// TestShutdownDelayKeepsAnswering cancels a server under a stream of new
// connections: during the delay /readyz is 503 while queries on new
// connections are still answered, each response closes its connection,
// and only then does the listener close.
func TestShutdownDelayKeepsAnswering(t *testing.T) {
	const delay = 400 * time.Millisecond
	s := New(Options{ShutdownDelay: delay})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{}}
	cancel()
	stopped := time.Now()
	if code, _, err := send(client, "GET", base+"/readyz", ""); err != nil || code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz while draining: %d %v, want 503", code, err)
	}
	answered := 0
	for time.Since(stopped) < delay*3/4 {
		req, _ := http.NewRequest("POST", base+"/v1/retrieve", strings.NewReader(`{"query": "tomatoes"}`))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("a query %s into the shutdown delay failed: %v", time.Since(stopped), err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || !resp.Close {
			t.Fatalf("a query during the delay: %d, closes its connection: %t", resp.StatusCode, resp.Close)
		}
		answered++
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
		if elapsed := time.Since(stopped); elapsed < delay {
			t.Fatalf("Serve returned after %s, before the %s delay", elapsed, delay)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its delay")
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("still accepting connections after the delay")
	}
	t.Logf("%d queries answered during the delay", answered)
}

// TestShutdownUnderLoadDropsNothing stops a server while 64 clients query
// it over kept-alive connections, as SIGTERM does to a query pod: the
// clients go on sending for part of the shutdown delay (until endpoints
// would stop routing to the pod), and every request sent gets a 200.
func TestShutdownUnderLoadDropsNothing(t *testing.T) {
	// The clients stop a quarter into the delay: the rest is the margin a
	// request sent just before needs to reach the server on a loaded
	// machine (under the race detector, beside other tests).
	const delay, clients = 2 * time.Second, 64
	s := New(Options{ShutdownDelay: delay, MaxInFlight: clients})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String() + "/v1/retrieve"
	transport := &http.Transport{MaxIdleConnsPerHost: clients}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 5 * time.Second}

	var routed atomic.Bool // endpoints still route here
	routed.Store(true)
	var sent, failed atomic.Int64
	var firstFailure atomic.Value
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for routed.Load() {
				sent.Add(1)
				code, body, err := send(client, "POST", url, `{"query": "tomatoes"}`)
				if err != nil || code != http.StatusOK {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%d %s %v", code, body, err))
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	cancel() // SIGTERM
	time.Sleep(delay / 4)
	routed.Store(false)
	wg.Wait()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if failed.Load() > 0 {
		t.Fatalf("%d of %d requests failed across the shutdown; first: %v", failed.Load(), sent.Load(), firstFailure.Load())
	}
	t.Logf("%d requests from %d clients across the shutdown, none failed", sent.Load(), clients)
}

// An unknown path is answered 404 without echoing a long path back.
func TestNotFoundDoesNotEchoLongPaths(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	ts := newTestServer(t, s)
	long := "/" + strings.Repeat("a", 512<<10)
	code, data := do(t, ts.Client(), "GET", ts.URL+long, "")
	if code != http.StatusNotFound || len(data) > 1024 {
		t.Errorf("a %d-byte unknown path: %d with a %d-byte body, want 404 under 1 KiB", len(long), code, len(data))
	}
	code, data = do(t, ts.Client(), "GET", ts.URL+"/nowhere", "")
	if code != http.StatusNotFound || !strings.Contains(errorMessage(data), "/nowhere") {
		t.Errorf("/nowhere: %d %s, want 404 naming the path", code, data)
	}
}
