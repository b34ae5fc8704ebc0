package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/parentrag/parentrag/internal/telemetry"
)

// BenchmarkQueryTracing answers one /v1/retrieve query through the
// server's handler with tracing off (the default) and on (every span
// recorded and batched to an exporter that drops them), side by side: the
// added time and allocations are tracing's cost.
func BenchmarkQueryTracing(b *testing.B) {
	s := New(Options{})
	s.SetBundle(openBundle(b, corpus(), "bench"))
	h := s.Handler()
	body := `{"query":"How does a rollback reach the previous revision?"}`
	run := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodPost, "/v1/retrieve", strings.NewReader(body))
			req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
	}
	b.Run("off", run)
	b.Run("on", func(b *testing.B) {
		stop, err := telemetry.Setup(context.Background(), telemetry.Config{Exporter: tracetest.NewNoopExporter(), ServiceName: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		defer stop(context.Background())
		run(b)
	})
}
