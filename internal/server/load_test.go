package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// The load test and benchmark build an index of PARENTRAG_LOAD_CHILDREN
// children (default 50,000: a few seconds to build) from a synthetic
// corpus, serve it on loopback and drive it with concurrent clients, half
// of them sending queries of nearly 64 KiB. PARENTRAG_LOAD_DURATION (a Go
// duration, default 3s) is how long TestServeUnderLoad drives it. The
// server runs without query-cost limits, so that the heavy queries are
// searched, unless PARENTRAG_LOAD_COST_LIMITS=1 keeps the defaults (the
// heavy queries are then refused with 400). All traffic goes to 127.0.0.1.

// loadChildrenPerDoc is about how many children bundletest's policy makes
// of a synthetic document; it sizes the corpus.
const loadChildrenPerDoc = 45

// loadTimeout is the request timeout of the served index, and loadSlack
// how much later than it every answer must have arrived.
const (
	loadTimeout = 2 * time.Second
	loadSlack   = 2 * time.Second
)

func loadChildren(tb testing.TB) int {
	n := 50_000
	if v := os.Getenv("PARENTRAG_LOAD_CHILDREN"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 100 {
			tb.Fatalf("PARENTRAG_LOAD_CHILDREN=%q: want a number of children, 100 or more", v)
		}
	}
	return n
}

func loadDuration(tb testing.TB) time.Duration {
	d := 3 * time.Second
	if v := os.Getenv("PARENTRAG_LOAD_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d <= 0 {
			tb.Fatalf("PARENTRAG_LOAD_DURATION=%q: want a positive duration", v)
		}
	}
	return d
}

// loadFixture is one built, opened index with the queries to send it.
type loadFixture struct {
	bundle   *bundle.Bundle
	children int
	build    time.Duration
	// normal and heavy are request bodies, marshalled once so that the
	// clients spend little of the CPU they share with the server.
	normal, heavy [][]byte
}

var (
	loadMu       sync.Mutex
	loadFixtures = map[int]*loadFixture{}
)

// loadIndex builds (once per process and size) and opens an index of
// about n children, and draws normal (4 to 8 words) and heavy (about 60 KB)
// queries for it.
func loadIndex(tb testing.TB, n int) *loadFixture {
	tb.Helper()
	loadMu.Lock()
	defer loadMu.Unlock()
	if f := loadFixtures[n]; f != nil {
		return f
	}
	start := time.Now()
	gen := synthtest.New(7, 20000)
	docs := gen.Documents(max(1, n/loadChildrenPerDoc))
	ix := bundletest.Build(tb, docs)
	dir, err := os.MkdirTemp("", "parentrag-load-*")
	if err != nil {
		tb.Fatal(err)
	}
	// The fixture outlives the test that built it (benchmarks reuse it),
	// so the directory is not the test's; the index is opened, its files
	// can go at once.
	defer os.RemoveAll(dir)
	bundletest.SaveIndex(tb, filepath.Join(dir, "bundle"), ix, bundletest.Manifest(docs, "load"))
	b, err := bundle.Open(filepath.Join(dir, "bundle"))
	if err != nil {
		tb.Fatal(err)
	}
	f := &loadFixture{bundle: b, children: len(ix.Children), build: time.Since(start)}
	for range 64 {
		f.normal = append(f.normal, queryBody(gen.Query(4, 8)))
	}
	for range 4 {
		var sb strings.Builder
		for sb.Len() < 60_000 {
			sb.WriteString(gen.Word())
			sb.WriteByte(' ')
		}
		f.heavy = append(f.heavy, queryBody(sb.String()))
	}
	loadFixtures[n] = f
	return f
}

// queryBody is the request body of query.
func queryBody(query string) []byte {
	body, _ := json.Marshal(map[string]any{"query": query})
	return body
}

// loadServer serves f's index with the production server on 127.0.0.1:0
// until the test ends, with no query-cost limit so that the heavy queries
// are searched, and returns its retrieve URL.
func loadServer(tb testing.TB, f *loadFixture) string {
	tb.Helper()
	opts := Options{RequestTimeout: loadTimeout, MaxQueryTerms: -1, MaxPostings: -1, ShutdownDelay: -1}
	if loadCostLimits() {
		opts.MaxQueryTerms, opts.MaxPostings = 0, 0
	}
	s := New(opts)
	s.SetBundle(f.bundle)
	return "http://" + serveOnListener(tb, s) + "/v1/retrieve"
}

// loadCostLimits reports whether the served index keeps the default
// query-cost limits (PARENTRAG_LOAD_COST_LIMITS=1).
func loadCostLimits() bool { return os.Getenv("PARENTRAG_LOAD_COST_LIMITS") == "1" }

// loadResult is one request's outcome.
type loadResult struct {
	heavy      bool
	code       int
	retryAfter string
	latency    time.Duration
	err        error
}

// loadClient returns an HTTP client that gives up on an answer later than
// the request timeout plus the slack, with connections for c clients.
func loadClient(c int) *http.Client {
	return &http.Client{
		Timeout:   loadTimeout + loadSlack,
		Transport: &http.Transport{MaxIdleConns: c, MaxIdleConnsPerHost: c, IdleConnTimeout: time.Minute},
	}
}

// loadPost sends one request body and reads the whole answer.
func loadPost(c *http.Client, url string, body []byte, heavy bool) loadResult {
	start := time.Now()
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return loadResult{heavy: heavy, err: err, latency: time.Since(start)}
	}
	var answer json.RawMessage
	err = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	return loadResult{heavy: heavy, code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), latency: time.Since(start), err: err}
}

// drive runs c clients against url until stop returns true, client i
// sending heavy queries when i is odd (and mixed is set). A client told
// to retry later waits 50ms, not the whole Retry-After, to keep the
// pressure on.
func drive(f *loadFixture, url string, c int, mixed bool, stop func() bool) []loadResult {
	client := loadClient(c)
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	var all []loadResult
	var wg sync.WaitGroup
	for i := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 1))
			heavy := mixed && i%2 == 1
			var mine []loadResult
			for !stop() {
				body := f.normal[r.IntN(len(f.normal))]
				if heavy {
					body = f.heavy[r.IntN(len(f.heavy))]
				}
				res := loadPost(client, url, body, heavy)
				mine = append(mine, res)
				if res.code == http.StatusServiceUnavailable || res.code == http.StatusTooManyRequests {
					time.Sleep(50 * time.Millisecond)
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all
}

// loadStats summarises results: counts by code and the p99 latency of
// admitted (200) normal queries.
type loadStats struct {
	total, ok, overloaded, timedOut, costly, other, dropped int
	normalOK, heavyOK                                       int
	// refusedHeavy is how many of overloaded were heavy queries.
	refusedHeavy              int
	p50, p99, heavyP99, worst time.Duration
}

func summarise(results []loadResult) loadStats {
	var s loadStats
	var lat, heavyLat []time.Duration
	for _, r := range results {
		s.total++
		s.worst = max(s.worst, r.latency)
		switch {
		case r.err != nil:
			s.dropped++
		case r.code == http.StatusOK && r.heavy:
			s.ok++
			s.heavyOK++
			heavyLat = append(heavyLat, r.latency)
		case r.code == http.StatusOK:
			s.ok++
			s.normalOK++
			lat = append(lat, r.latency)
		case r.code == http.StatusServiceUnavailable || r.code == http.StatusTooManyRequests:
			s.overloaded++
			if r.heavy {
				s.refusedHeavy++
			}
		case r.code == http.StatusGatewayTimeout:
			s.timedOut++
		case r.code == http.StatusBadRequest && r.heavy:
			s.costly++
		default:
			s.other++
		}
	}
	s.p50, s.p99 = quantile(lat, 0.5), quantile(lat, 0.99)
	s.heavyP99 = quantile(heavyLat, 0.99)
	return s
}

// quantile is the q-quantile of lat (sorted in place), 0 when it is empty.
func quantile(lat []time.Duration, q float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return lat[min(len(lat)-1, int(float64(len(lat))*q))]
}

// Under 64 concurrent clients, half of them sending queries of nearly 64
// KiB, every request is answered within the request timeout plus slack:
// 200, 503 or 429 with Retry-After, or 504; none is dropped, and normal
// queries keep being answered.
func TestServeUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the load test builds an index and drives it for seconds; -short skips it")
	}
	f := loadIndex(t, loadChildren(t))
	url := loadServer(t, f)
	d := loadDuration(t)
	end := time.Now().Add(d)
	results := drive(f, url, 64, true, func() bool { return time.Now().After(end) })
	s := summarise(results)
	t.Logf("%d children (built in %s), 64 clients for %s: %d requests (%.0f/s): %d ok, %d refused 503/429, %d timed out 504, %d refused as too costly 400, %d other, %d dropped; admitted normal queries: %d, p50 %s, p99 %s",
		f.children, f.build.Round(time.Millisecond), d, s.total, float64(s.total)/d.Seconds(), s.ok, s.overloaded, s.timedOut, s.costly, s.other, s.dropped, s.normalOK, s.p50, s.p99)
	for _, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("a request got no answer after %s: %v", r.latency, r.err)
		case r.code == 400 && r.heavy && loadCostLimits():
			// Refused as too costly, as the limits say.
		case r.code != 200 && r.code != 503 && r.code != 429 && r.code != 504:
			t.Errorf("a request (heavy: %t) was answered %d, want 200, 503, 429 or 504", r.heavy, r.code)
		case (r.code == 503 || r.code == 429) && r.retryAfter == "":
			t.Errorf("a %d came without Retry-After", r.code)
		case r.latency > loadTimeout+loadSlack:
			t.Errorf("a request was answered %d after %s, past the timeout %s plus %s", r.code, r.latency, loadTimeout, loadSlack)
		}
		if t.Failed() {
			break
		}
	}
	if s.normalOK == 0 {
		t.Errorf("no normal query was answered under load")
	}
}

// BenchmarkServeLoad reports throughput and the p99 latency of admitted
// normal queries at 1 to 256 concurrent clients, half of them (from 2 up)
// sending queries of nearly 64 KiB, over PARENTRAG_LOAD_CHILDREN children.
func BenchmarkServeLoad(b *testing.B) {
	f := loadIndex(b, loadChildren(b))
	b.Logf("%d children, built and opened in %s", f.children, f.build.Round(time.Millisecond))
	for _, c := range []int{1, 4, 16, 64, 256} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			url := loadServer(b, f)
			var sent atomic.Int64
			n := int64(b.N)
			b.ResetTimer()
			start := time.Now()
			results := drive(f, url, c, true, func() bool { return sent.Add(1) > n })
			elapsed := time.Since(start)
			b.StopTimer()
			s := summarise(results)
			b.ReportMetric(float64(s.total)/elapsed.Seconds(), "req/s")
			b.ReportMetric(float64(s.normalOK)/elapsed.Seconds(), "normal-ok/s")
			b.ReportMetric(float64(s.heavyOK)/elapsed.Seconds(), "heavy-ok/s")
			b.ReportMetric(float64(s.p99.Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(s.heavyP99.Microseconds())/1000, "heavy-p99-ms")
			b.ReportMetric(float64(s.worst.Microseconds())/1000, "worst-ms")
			b.ReportMetric(float64(s.overloaded-s.refusedHeavy)/float64(max(1, s.total)), "refused-normal/op")
			b.ReportMetric(float64(s.refusedHeavy)/float64(max(1, s.total)), "refused-heavy/op")
			b.ReportMetric(float64(s.costly)/float64(max(1, s.total)), "costly/op")
			b.ReportMetric(float64(s.timedOut)/float64(max(1, s.total)), "timeout/op")
			b.ReportMetric(float64(s.dropped+s.other), "dropped")
		})
	}
}
