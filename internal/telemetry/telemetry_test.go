package telemetry_test

import (
	"context"
	"testing"

	"github.com/parentrag/parentrag/internal/telemetry"
	"github.com/parentrag/parentrag/internal/telemetry/telemetrytest"
)

// TestSilenceRecordsNothingBelow starts spans in a silenced context while
// tracing is on: none is recorded, and the span around them is.
func TestSilenceRecordsNothingBelow(t *testing.T) {
	rec := telemetrytest.Start(t, "")
	ctx, gate := telemetry.Start(context.Background(), telemetry.SpanGate)
	quiet := telemetry.Silence(ctx)
	for range 3 {
		qctx, query := telemetry.Start(quiet, "parentrag.child_search")
		if query.IsRecording() || qctx != quiet {
			t.Error("a span started in a silenced context records")
		}
		query.End()
	}
	gate.End()
	spans := rec.Stop(t)
	if len(spans) != 1 || spans[0].Name != telemetry.SpanGate {
		t.Errorf("spans %v, want the gate's alone", spans)
	}
}
