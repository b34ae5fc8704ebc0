package server

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// holdFirstRetrieval makes the first retrieval of s wait until the
// returned release is called; held is closed once it waits.
func holdFirstRetrieval(s *Server) (held <-chan struct{}, release func()) {
	h, hold := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	s.beforeRetrieve = func(context.Context) {
		// Not a sync.Once: the retrievals after the first must not wait.
		if first.CompareAndSwap(false, true) {
			close(h)
			<-hold
		}
	}
	var released sync.Once
	return h, func() { released.Do(func() { close(hold) }) }
}

// longQuery is a question of about n bytes.
func longQuery(n int) string {
	return strings.Repeat("tomatoes basil compost ", n/23+1)
}

// A heavy query holding every heavy slot leaves the light slots to short
// questions, which are answered; the next heavy query is refused with 429
// and Retry-After, and counted.
func TestHeavyQueryLeavesLightSlots(t *testing.T) {
	s := New(Options{MaxInFlight: 1, MaxQueued: -1, HeavyBodyBytes: 1024, QueueWait: 50 * time.Millisecond})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	held, release := holdFirstRetrieval(s)
	defer release()
	ts := newTestServer(t, s)
	heavy := fmt.Sprintf(`{"query": %q}`, longQuery(4096))
	first := make(chan int, 1)
	go func() {
		code, _, _ := send(ts.Client(), "POST", ts.URL+"/v1/retrieve", heavy)
		first <- code
	}()
	<-held
	if code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "sailing upwind"}`); code != 200 {
		t.Errorf("a short question beside a heavy query: %d %s, want 200", code, body)
	}
	resp, err := ts.Client().Post(ts.URL+"/v1/retrieve", "application/json", strings.NewReader(heavy))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("a second heavy query: %d, Retry-After %q, want 429 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	release()
	if code := <-first; code != 200 {
		t.Errorf("the heavy query held: %d, want 200", code)
	}
	_, metrics := do(t, ts.Client(), "GET", ts.URL+"/metrics", "")
	if !strings.Contains(string(metrics), `parentrag_requests_rejected_total{reason="heavy_lane_full"} 1`) {
		t.Errorf("/metrics does not count the refused heavy query")
	}
}

// A heavy request finding every slot and queue place of the heavy lane
// taken is refused before its body is read: a client that has sent only
// the headers is answered at once.
func TestHeavyBodyRefusedUnread(t *testing.T) {
	s := New(Options{MaxHeavyInFlight: 1, HeavyBodyBytes: 1024, QueueWait: 10 * time.Second})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	held, release := holdFirstRetrieval(s)
	defer release()
	ts := newTestServer(t, s)
	heavy := fmt.Sprintf(`{"query": %q}`, longQuery(4096))
	go send(ts.Client(), "POST", ts.URL+"/v1/retrieve", heavy)
	<-held
	// The heavy lane has as many queue places as slots: fill the one.
	go send(ts.Client(), "POST", ts.URL+"/v1/retrieve", heavy)
	for deadline := time.Now().Add(5 * time.Second); s.admit.heavy.queued.Load() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second heavy query never queued")
		}
	}
	u, _ := url.Parse(ts.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The headers announce 60,000 bytes; none of them is ever sent.
	fmt.Fprintf(conn, "POST /v1/retrieve HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n", u.Host)
	conn.SetReadDeadline(time.Now().Add(time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a heavy request whose body was not sent: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("heavy request, lane full: %d, Retry-After %q, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// A short question whose terms reach more than HeavyPostings postings is
// searched in the heavy lane: with that lane full it is refused with 429,
// while a question under the limit is answered.
func TestCostlyShortQueryMovesToHeavyLane(t *testing.T) {
	s := New(Options{MaxHeavyInFlight: 1, HeavyBodyBytes: 1024, HeavyPostings: 2, HeavyPostingsPerChild: -1, QueueWait: 50 * time.Millisecond})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	held, release := holdFirstRetrieval(s)
	defer release()
	ts := newTestServer(t, s)
	go send(ts.Client(), "POST", ts.URL+"/v1/retrieve", fmt.Sprintf(`{"query": %q}`, longQuery(4096)))
	<-held
	// "revision" is in several children of three documents.
	code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "revision rollback tomatoes"}`)
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), "too many heavy queries") {
		t.Errorf("a short query over the postings of the heavy lane: %d %s, want 429", code, body)
	}
	if code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "harbor"}`); code != 200 {
		t.Errorf("a question reaching one posting: %d %s, want 200", code, body)
	}
}

// The heavy limit grows with the index: the question TestCostlyShortQuery
// moves to the full heavy lane is answered when the limit is 8 postings
// per child of this index, not a fixed 2.
func TestHeavyLimitGrowsWithTheIndex(t *testing.T) {
	s := New(Options{MaxHeavyInFlight: 1, HeavyBodyBytes: 1024, HeavyPostings: 2, QueueWait: 50 * time.Millisecond})
	b := openBundle(t, corpus(), "rev-a")
	s.SetBundle(b)
	if got, want := s.heavyPostings(), DefaultHeavyPostingsPerChild*b.Manifest.Children; got != want {
		t.Fatalf("heavy limit %d for %d children, want %d", got, b.Manifest.Children, want)
	}
	held, release := holdFirstRetrieval(s)
	defer release()
	ts := newTestServer(t, s)
	go send(ts.Client(), "POST", ts.URL+"/v1/retrieve", fmt.Sprintf(`{"query": %q}`, longQuery(4096)))
	<-held
	if code, body := do(t, ts.Client(), "POST", ts.URL+"/v1/retrieve", `{"query": "revision rollback tomatoes"}`); code != 200 {
		t.Errorf("a short question under the index's heavy limit, heavy lane full: %d %s, want 200", code, body)
	}
}

func TestScaledLimit(t *testing.T) {
	for _, tc := range []struct{ floor, perChild, children, want int }{
		{2_000_000, 8, 100_000, 2_000_000},
		{2_000_000, 8, 1_450_000, 11_600_000},
		{2_000_000, 0, 1_450_000, 2_000_000},
		{0, 8, 1_450_000, 0},
	} {
		if got := scaledLimit(tc.floor, tc.perChild, tc.children); got != tc.want {
			t.Errorf("scaledLimit(%d, %d, %d) = %d, want %d", tc.floor, tc.perChild, tc.children, got, tc.want)
		}
	}
}
