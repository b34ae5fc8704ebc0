package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Field names are matched exactly and given once, at the top level, in
// filter and in filter.metadata; the error names the field.
func TestRetrieveFieldNamesExactAndUnique(t *testing.T) {
	s := New(Options{})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)
	cases := []struct{ body, errPart string }{
		{`{"QUERY": "tomatoes", "MAXPARENTS": 1}`, `unknown field "QUERY": field names are case-sensitive, did you mean "query"?`},
		{`{"query": "tomatoes", "MaxParents": 1}`, `did you mean "maxParents"`},
		{`{"query": "tomatoes", "query": "sailing"}`, `duplicate field "query"`},
		{`{"query": "tomatoes", "maxParents": 1, "maxParents": 2}`, `duplicate field "maxParents"`},
		{`{"query": "tomatoes", "filter": {"DocId": "garden.md"}}`, `unknown field "filter.DocId": field names are case-sensitive, did you mean "filter.docId"?`},
		{`{"query": "tomatoes", "filter": {"docId": "a", "docId": "garden.md"}}`, `duplicate field "filter.docId"`},
		{`{"query": "tomatoes", "filter": {"metadata": {"lang": "de", "lang": "en"}}}`, `duplicate field "filter.metadata.lang"`},
	}
	for _, c := range cases {
		code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", c.body)
		var e ErrorResponse
		if code != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, c.errPart) {
			t.Errorf("%s: %d %s, want 400 mentioning %q", c.body, code, body, c.errPart)
		}
	}
	// Exact names, metadata keys differing only in case, are fine.
	code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve",
		`{"query": "tomatoes", "maxParents": 1, "filter": {"metadata": {}, "docIdPrefix": ""}}`)
	if code != 200 {
		t.Fatalf("exact field names: %d %s", code, body)
	}
}

// A positive budget too small for any text is a 400 naming the smallest
// useful budget, and that budget returns text.
func TestRetrieveBudgetTooSmall(t *testing.T) {
	s := New(Options{})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)
	code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "tomatoes", "budget": 1}`)
	m := regexp.MustCompile(`smallest useful budget for this query is (\d+)`).FindSubmatch(body)
	if code != http.StatusBadRequest || m == nil {
		t.Fatalf("budget 1: %d %s, want 400 naming the smallest useful budget", code, body)
	}
	need, _ := strconv.Atoi(string(m[1]))
	if need <= 1 {
		t.Fatalf("smallest useful budget %d, want more than the budget refused", need)
	}
	code, body = do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", fmt.Sprintf(`{"query": "tomatoes", "budget": %d}`, need))
	var resp RetrieveResponse
	if code != 200 || json.Unmarshal(body, &resp) != nil || len(resp.Results) == 0 || resp.Results[0].Text == "" {
		t.Fatalf("budget %d: %d %s, want text", need, code, body)
	}
}

// Queries over the term or postings limits are refused with 400 naming the
// limit, and counted.
func TestRetrieveQueryCostLimits(t *testing.T) {
	s := New(Options{MaxQueryTerms: 3})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts := newTestServer(t, s)
	code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "tomatoes basil compost mulch garden"}`)
	if code != 400 || !strings.Contains(string(body), "distinct terms after analysis, over the limit of 3") {
		t.Fatalf("five terms over a limit of 3: %d %s", code, body)
	}
	if code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "tomatoes basil"}`); code != 200 {
		t.Fatalf("two terms: %d %s", code, body)
	}
	s2 := New(Options{MaxPostings: 1, MaxPostingsPerChild: -1})
	s2.SetBundle(openBundle(t, corpus(), "rev-a"))
	ts2 := newTestServer(t, s2)
	code, body = do(t, ts2.Client(), "POST", ts2.URL+"/v1/retrieve", `{"query": "revision"}`)
	if code != 400 || !strings.Contains(string(body), "postings in the index, over the limit of 1") {
		t.Fatalf("a common term over 1 posting: %d %s", code, body)
	}
	_, metrics := do(t, ts.Client(), "GET", ts.URL+"/metrics", "")
	if !strings.Contains(string(metrics), `parentrag_requests_rejected_total{reason="query_too_costly"} 1`) {
		t.Errorf("/metrics does not count the costly query:\n%s", metrics)
	}
}

// With every slot busy, a request waits QueueWait in the queue and is then
// refused with 503 and Retry-After; with the queue full it is refused at
// once. Both are counted by reason, and a slot freed serves again.
func TestAdmissionControl(t *testing.T) {
	s := New(Options{MaxInFlight: 1, MaxQueued: 1, QueueWait: 100 * time.Millisecond})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	hold, held := make(chan struct{}), make(chan struct{}, 1)
	var once sync.Once
	s.beforeRetrieve = func(ctx context.Context) {
		once.Do(func() {
			held <- struct{}{}
			<-hold
		})
	}
	ts := newTestServer(t, s)
	url := ts.URL + "/v1/retrieve"
	first := make(chan int, 1)
	go func() {
		code, _, _ := send(ts.Client(), "POST", url, `{"query": "tomatoes"}`)
		first <- code
	}()
	<-held // the one slot is taken

	type answer struct {
		code       int
		retryAfter string
		body       string
		took       time.Duration
	}
	post := func() answer {
		start := time.Now()
		resp, err := ts.Client().Post(url, "application/json", strings.NewReader(`{"query": "tomatoes"}`))
		if err != nil {
			t.Error(err)
			return answer{}
		}
		defer resp.Body.Close()
		var e ErrorResponse
		json.NewDecoder(resp.Body).Decode(&e)
		return answer{resp.StatusCode, resp.Header.Get("Retry-After"), e.Error, time.Since(start)}
	}
	queued := make(chan answer, 1)
	go func() { queued <- post() }()
	// Wait until the second request is queued, then a third finds the
	// queue full.
	deadline := time.Now().Add(5 * time.Second)
	for s.admit.light.queued.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	full := post()
	if full.code != 503 || full.retryAfter != "1" || !strings.Contains(full.body, "queue is full") {
		t.Errorf("queue full: %+v, want 503, Retry-After 1 and a JSON error", full)
	}
	q := <-queued
	if q.code != 503 || q.retryAfter != "1" || !strings.Contains(q.body, "within the queue wait") || q.took < 100*time.Millisecond {
		t.Errorf("queued past the wait: %+v, want 503 with Retry-After after 100ms", q)
	}
	close(hold)
	if code := <-first; code != 200 {
		t.Errorf("the admitted request: %d", code)
	}
	if a := post(); a.code != 200 {
		t.Errorf("after the slot is freed: %+v", a)
	}
	_, metrics := do(t, ts.Client(), "GET", ts.URL+"/metrics", "")
	for _, want := range []string{
		`parentrag_requests_rejected_total{reason="queue_full"} 1`,
		`parentrag_requests_rejected_total{reason="queue_wait"} 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
