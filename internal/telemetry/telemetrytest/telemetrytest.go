// Package telemetrytest turns parentrag's tracing on in a test, with the
// spans kept in memory for the test to read.
package telemetrytest

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/parentrag/parentrag/internal/telemetry"
)

// Recorder keeps the spans of a test.
type Recorder struct {
	exp  *tracetest.InMemoryExporter
	stop func(context.Context) error
}

// Start turns tracing on as telemetry.Setup does with endpoint ("" for
// none: the OTEL_* variables then say what ChildEnv passes on), every
// span going to memory instead of the endpoint, until Stop or the end of
// the test.
func Start(t testing.TB, endpoint string) *Recorder {
	t.Helper()
	r := &Recorder{exp: tracetest.NewInMemoryExporter()}
	stop, err := telemetry.Setup(context.Background(), telemetry.Config{Endpoint: endpoint, ServiceName: "test", Exporter: kept{r.exp}})
	if err != nil {
		t.Fatal(err)
	}
	r.stop = stop
	t.Cleanup(func() { r.Stop(t) })
	return r
}

// Stop turns tracing off, once, and returns every span ended until then.
func (r *Recorder) Stop(t testing.TB) tracetest.SpanStubs {
	t.Helper()
	if r.stop != nil {
		if err := r.stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		r.stop = nil
	}
	return r.exp.GetSpans()
}

// StopWhen waits, up to timeout, until the spans ended so far satisfy
// done, then stops as Stop does. A test that waits on an effect of traced
// work (a status written inside a reconcile) uses it to wait for the spans
// that were still open when the effect showed.
func (r *Recorder) StopWhen(t testing.TB, timeout time.Duration, done func(tracetest.SpanStubs) bool) tracetest.SpanStubs {
	t.Helper()
	flusher, _ := otel.GetTracerProvider().(interface{ ForceFlush(context.Context) error })
	for deadline := time.Now().Add(timeout); flusher != nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := flusher.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if done(r.exp.GetSpans()) {
			break
		}
	}
	return r.Stop(t)
}

// kept is an in-memory exporter whose spans outlive the provider's
// shutdown, which flushes them.
type kept struct{ *tracetest.InMemoryExporter }

// Shutdown keeps the spans.
func (kept) Shutdown(context.Context) error { return nil }

var _ sdktrace.SpanExporter = kept{}
