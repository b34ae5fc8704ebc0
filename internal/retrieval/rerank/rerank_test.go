package rerank

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/rerank/reranktest"
)

func TestScoresInBothConventions(t *testing.T) {
	tei, cohere := reranktest.NewTEI("zebra"), reranktest.NewCohere("zebra")
	defer tei.Close()
	defer cohere.Close()
	for name, o := range map[string]Options{
		"TEI":    {URL: tei.URL, Convention: TEI},
		"Cohere": {URL: cohere.URL + "/", Convention: Cohere, Model: "rerank-v3"},
	} {
		c, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Scores(context.Background(), "zebra stripes", []string{"no match", "zebra zebra", "a zebra"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := []float64{0, 2, 1}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("%s: scores %v, want %v in the order of the texts", name, got, want)
		}
	}
}

func TestRetriesServerErrorsButNotBadRequests(t *testing.T) {
	var calls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`[{"index":0,"score":0.5}]`))
	}))
	defer flaky.Close()
	c, _ := New(Options{URL: flaky.URL, Convention: TEI, Retries: 2})
	if got, err := c.Scores(context.Background(), "q", []string{"t"}); err != nil || got[0] != 0.5 || calls.Load() != 2 {
		t.Errorf("after a 503: scores %v, err %v, %d calls; want 0.5 on the second call", got, err, calls.Load())
	}

	calls.Store(0)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "texts must not be empty", http.StatusUnprocessableEntity)
	}))
	defer bad.Close()
	c, _ = New(Options{URL: bad.URL, Convention: TEI, Retries: 3})
	_, err := c.Scores(context.Background(), "q", []string{"t"})
	if err == nil || !strings.Contains(err.Error(), "422") || !strings.Contains(err.Error(), "texts must not be empty") || calls.Load() != 1 {
		t.Errorf("a 422: err %v after %d calls, want the server's message after one call", err, calls.Load())
	}
}

func TestTimeoutAndMalformedAnswers(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(500 * time.Millisecond):
		}
	}))
	defer slow.Close()
	c, _ := New(Options{URL: slow.URL, Convention: TEI, Timeout: 50 * time.Millisecond, Retries: -1})
	start := time.Now()
	if _, err := c.Scores(context.Background(), "q", []string{"t"}); err == nil || time.Since(start) > time.Second {
		t.Errorf("slow server: err %v after %v, want a timeout well under a second", err, time.Since(start))
	}
	wrong := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"results":[{"index":7,"relevance_score":1}]}`))
	}))
	defer wrong.Close()
	c, _ = New(Options{URL: wrong.URL, Convention: Cohere})
	if _, err := c.Scores(context.Background(), "q", []string{"t"}); err == nil || !strings.Contains(err.Error(), "text 7 of 1") {
		t.Errorf("an answer about a text never sent: err %v", err)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	if _, err := New(Options{Convention: TEI}); err == nil {
		t.Error("no URL accepted")
	}
	if _, err := New(Options{URL: "http://x", Convention: "Voyage"}); err == nil || !strings.Contains(err.Error(), `"Voyage"`) {
		t.Errorf("unknown convention: %v", err)
	}
}
