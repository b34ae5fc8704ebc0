package server

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// serveOnListener serves s on a real TCP listener of 127.0.0.1, with the
// HTTP server Run uses, until the test ends; it returns the address.
func serveOnListener(t testing.TB, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// stalledPaths are the endpoints a stalled body is sent to: every
// protocol that retrieves.
var stalledPaths = []string{"/v1/retrieve", LangChainPath, "/v1/vector_stores/default/search", MCPPath}

// postStalled opens a connection to addr and posts to path the headers of
// a 60-byte JSON body and its first 10 bytes, and nothing more.
func postStalled(addr, path string) (net.Conn, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 60\r\n\r\n{\"query\":", path, addr)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// stallers keeps n connections per stalled path open, each stalled after
// 10 bytes of its body, opening a new one as soon as the server answers
// or closes one, until the returned stop is called.
func stallers(t *testing.T, addr string, n int) (stop func()) {
	var wg sync.WaitGroup
	var stopped atomic.Bool
	for _, path := range stalledPaths {
		for range n {
			wg.Go(func() {
				for !stopped.Load() {
					conn, err := postStalled(addr, path)
					if err != nil {
						t.Errorf("stalling %s: %v", path, err)
						return
					}
					// Blocks until the server answers or closes; the
					// deadline lets stop end it.
					conn.SetReadDeadline(time.Now().Add(5 * time.Second))
					http.ReadResponse(bufio.NewReader(conn), nil)
					conn.Close()
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
	}
	return func() { stopped.Store(true); wg.Wait() }
}

// While many connections per protocol stall after 10 bytes of a 60-byte
// body, opened again as soon as each is answered, ordinary queries of
// every protocol are all answered: a stalled body holds no query slot.
func TestStalledBodiesLeaveQuerySlots(t *testing.T) {
	s := New(Options{MaxInFlight: 2, MaxQueued: 2, ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	addr := serveOnListener(t, s)
	base := "http://" + addr
	stop := stallers(t, addr, 6)
	defer stop()
	time.Sleep(200 * time.Millisecond) // let the stalled connections in first
	client := &http.Client{Timeout: 10 * time.Second}
	session := connectMCP(t, base, client)
	answered, failed := map[string]int{}, []string{}
	// Past the 2 s body deadline, so that the stalled connections are
	// answered and opened again while queries are asked.
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); {
		for _, p := range protocolPosts {
			code, data := doJSON(t, client, "POST", base+p.path, p.body)
			if code != http.StatusOK {
				failed = append(failed, fmt.Sprintf("%s: %d %s", p.path, code, strings.TrimSpace(string(data))))
				continue
			}
			answered[p.path]++
		}
		if res := callRetrieve(t, session, map[string]any{"query": "tomatoes"}); res.IsError {
			failed = append(failed, "mcp: "+toolText(res))
			continue
		}
		answered[MCPPath]++
	}
	if len(failed) > 0 {
		t.Errorf("%d queries failed beside stalled bodies (%v answered), first: %v", len(failed), answered, failed[:min(3, len(failed))])
	}
	for _, path := range append([]string{protocolPosts[0].path, protocolPosts[1].path, protocolPosts[2].path}, MCPPath) {
		if answered[path] == 0 {
			t.Errorf("%s answered no query beside stalled bodies", path)
		}
	}
}

// A body that stalls is answered 408 on every protocol within the 2 s
// body deadline (and a little slack), and the connection is closed.
func TestStalledBodyAnsweredWithinDeadline(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	addr := serveOnListener(t, s)
	var wg sync.WaitGroup
	for _, path := range stalledPaths {
		wg.Go(func() {
			start := time.Now()
			conn, err := postStalled(addr, path)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			took := time.Since(start)
			if err != nil {
				t.Errorf("%s: no answer to a stalled body after %s: %v", path, took.Round(time.Millisecond), err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout || took > bodyReadTimeout+time.Second {
				t.Errorf("%s: stalled body answered %d after %s, want 408 within %s", path, resp.StatusCode, took.Round(time.Millisecond), bodyReadTimeout)
			}
		})
	}
	wg.Wait()
}

// The body budget counts the bytes received, not those announced: many
// connections that announce a long body and stall after a few bytes leave
// it to ordinary queries, while bodies really held past it are refused
// with 503 and Retry-After, counted, until their bytes are given back.
func TestBodyBudgetCountsBytesReceived(t *testing.T) {
	s := New(Options{MaxBodyBytes: 1024, BodyBudget: 2048, ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	addr := serveOnListener(t, s)
	base := "http://" + addr
	open := func(announced int, sent string) net.Conn {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprintf(conn, "POST /v1/retrieve HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, announced, sent)
		return conn
	}
	waitHeld := func(want int64) {
		for deadline := time.Now().Add(time.Second); s.bodies.held.Load() != want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("bodies hold %d bytes, want %d", s.bodies.held.Load(), want)
			}
		}
	}
	for range 50 {
		open(1000, `{"query":`)
	}
	waitHeld(50 * 9)
	if code, data := do(t, http.DefaultClient, "POST", base+"/v1/retrieve", `{"query": "tomatoes"}`); code != http.StatusOK {
		t.Fatalf("beside 50 bodies announcing 1000 bytes and sending 9: %d %s, want 200", code, data)
	}
	big := []net.Conn{open(1000, strings.Repeat(" ", 795)), open(1000, strings.Repeat(" ", 795))}
	waitHeld(50*9 + 2*795)
	resp, err := http.Post(base+"/v1/retrieve", "application/json", strings.NewReader(`{"query": "tomatoes"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("with 2,040 of 2,048 bytes of bodies held: %d Retry-After %q, want 503 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for _, c := range big {
		c.Close()
	}
	waitHeld(50 * 9)
	if code, data := do(t, http.DefaultClient, "POST", base+"/v1/retrieve", `{"query": "tomatoes"}`); code != http.StatusOK {
		t.Errorf("once the long bodies are gone: %d %s, want 200", code, data)
	}
	_, metrics := do(t, http.DefaultClient, "GET", base+"/metrics", "")
	if want := `parentrag_requests_rejected_total{reason="body_budget"} 1`; !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// A search that runs past the 2 s body deadline, its body long received,
// is answered: the deadline ends with the body, and does not cancel the
// request when the server reads on for the connection's next request.
func TestSearchOutlivesBodyDeadline(t *testing.T) {
	s := New(Options{ShutdownDelay: -1})
	s.SetBundle(openBundle(t, corpus(), "rev-a"))
	s.beforeRetrieve = func(ctx context.Context) {
		select {
		case <-time.After(bodyReadTimeout + 300*time.Millisecond):
		case <-ctx.Done():
		}
	}
	addr := serveOnListener(t, s)
	if code, data := do(t, http.DefaultClient, "POST", "http://"+addr+"/v1/retrieve", `{"query": "tomatoes"}`); code != http.StatusOK {
		t.Errorf("a search of %s: %d %s, want 200", bodyReadTimeout+300*time.Millisecond, code, data)
	}
}
