package server

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
)

// benchmarkGuard measures what the guard adds to a request: each
// iteration sends a request with token to a path no handler serves, so
// that the time is the guard's and the 404's, which mode None pays too.
func benchmarkGuard(b *testing.B, az Authorizer, token string, want int) {
	b.Helper()
	s := New(Options{Auth: az, Registry: prometheus.NewRegistry()})
	h := s.Handler()
	req := httptest.NewRequest("GET", "/v1/other", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != want {
			b.Fatalf("status %d, want %d", w.Code, want)
		}
	}
}

func BenchmarkGuardNone(b *testing.B) { benchmarkGuard(b, nil, "", http.StatusNotFound) }

// BenchmarkGuardBearer compares a token with each of n accepted ones.
func BenchmarkGuardBearer(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			for i := range n {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("key", i)), fmt.Appendf(nil, "token-%064d", i), 0o600); err != nil {
					b.Fatal(err)
				}
			}
			d, err := NewTokenDir(dir, 0, nil)
			if err != nil {
				b.Fatal(err)
			}
			benchmarkGuard(b, d, fmt.Sprintf("token-%064d", n-1), http.StatusNotFound)
		})
	}
}

// BenchmarkGuardKubernetesCached is a Kubernetes token whose decision is
// kept, the case of every query within the TTL but a token's first; it
// reports the API calls a request costs, which must be none.
func BenchmarkGuardKubernetesCached(b *testing.B) {
	var calls atomic.Int64
	cfg := &rest.Config{Host: "http://127.0.0.1:1", WrapTransport: func(http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(*http.Request) (*http.Response, error) {
			calls.Add(1)
			return nil, fmt.Errorf("no API server in a benchmark")
		})
	}}
	k, err := NewKubeReviewer(cfg, "team-a", "docs", KubeReviewerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	token := "eyJhbGciOiJSUzI1NiJ9." + strings.Repeat("x", 900) // the size of a ServiceAccount token
	// Kept far longer than the benchmark runs.
	k.decisions.Add(decisionKey{digest: sha256.Sum256([]byte(token)), access: AccessQuery}, decision{}, time.Hour)
	benchmarkGuard(b, k, token, http.StatusNotFound)
	b.ReportMetric(float64(calls.Load())/float64(b.N), "api-calls/request")
}
