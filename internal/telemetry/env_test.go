package telemetry_test

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/baggage"

	"github.com/parentrag/parentrag/internal/telemetry"
	"github.com/parentrag/parentrag/internal/telemetry/telemetrytest"
)

// environ is a process environment as a lookup.
func environ(vars ...telemetry.EnvVar) func(string) string {
	return func(name string) string {
		for _, v := range vars {
			if v.Name == name {
				return v.Value
			}
		}
		return ""
	}
}

func TestExtractEnvMakesTheCarriedSpanTheParent(t *testing.T) {
	rec := telemetrytest.Start(t, "")
	ctx := telemetry.ExtractEnv(context.Background(), environ(
		telemetry.EnvVar{Name: "TRACEPARENT", Value: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		telemetry.EnvVar{Name: "TRACESTATE", Value: "vendor=opaque"},
		telemetry.EnvVar{Name: "BAGGAGE", Value: "corpus=handbook"},
	))
	_, span := telemetry.Start(ctx, telemetry.SpanIndexJob)
	span.End()
	spans := rec.Stop(t)
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent.SpanID().String() != "00f067aa0ba902b7" || !s.Parent.IsRemote() {
		t.Errorf("span of trace %s with parent %s (remote %v), want the TRACEPARENT's trace and span", s.SpanContext.TraceID(), s.Parent.SpanID(), s.Parent.IsRemote())
	}
	if !s.SpanContext.IsSampled() || s.SpanContext.TraceState().Get("vendor") != "opaque" {
		t.Errorf("sampled %v, tracestate %q: want the carried flags and state", s.SpanContext.IsSampled(), s.SpanContext.TraceState())
	}
	if got := baggage.FromContext(ctx).Member("corpus").Value(); got != "handbook" {
		t.Errorf("baggage corpus=%q, want handbook", got)
	}
}

func TestExtractEnvIgnoresAMalformedTraceparent(t *testing.T) {
	rec := telemetrytest.Start(t, "")
	bad := []string{"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"}
	for _, v := range bad {
		ctx := telemetry.ExtractEnv(context.Background(), environ(telemetry.EnvVar{Name: "TRACEPARENT", Value: v}))
		_, span := telemetry.Start(ctx, telemetry.SpanIndexJob)
		span.End()
	}
	spans := rec.Stop(t)
	if len(spans) != len(bad) {
		t.Fatalf("%d spans, want %d", len(spans), len(bad))
	}
	for _, s := range spans {
		if s.Parent.IsValid() || !s.SpanContext.IsValid() {
			t.Errorf("a span started from a malformed TRACEPARENT has parent %v and context %v: want a trace of its own", s.Parent, s.SpanContext)
		}
	}
}

func TestChildEnvCarriesTheSpanAndTheEndpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer secret")
	rec := telemetrytest.Start(t, "http://collector.monitoring:4317")
	ctx, parent := telemetry.Start(context.Background(), telemetry.SpanReconcile)
	env := telemetry.ChildEnv(ctx)
	var names []string
	for _, v := range env {
		names = append(names, v.Name)
	}
	if want := []string{"TRACEPARENT", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL"}; !slices.Equal(names, want) {
		t.Fatalf("child env %v, want %v (never the headers)", env, want)
	}
	sc := parent.SpanContext()
	if want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"; env[0].Value != want {
		t.Errorf("TRACEPARENT %q, want %q", env[0].Value, want)
	}
	if env[1].Value != "http://collector.monitoring:4317" || env[2].Value != "grpc" {
		t.Errorf("exporter variables %v", env[1:])
	}
	// The child reads them back: its span is a child of the parent's.
	_, child := telemetry.Start(telemetry.ExtractEnv(context.Background(), environ(env...)), telemetry.SpanIndexJob)
	child.End()
	parent.End()
	spans := rec.Stop(t)
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	if s := spans[0]; s.Name != telemetry.SpanIndexJob || s.Parent.SpanID() != sc.SpanID() || s.SpanContext.TraceID() != sc.TraceID() {
		t.Errorf("the child's span %s has parent %s in trace %s, want %s in %s", s.Name, s.Parent.SpanID(), s.SpanContext.TraceID(), sc.SpanID(), sc.TraceID())
	}
}

func TestChildEnvPassesTheVariablesItWasGiven(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:4318/v1/traces")
	telemetrytest.Start(t, "")
	env := telemetry.ChildEnv(context.Background())
	want := telemetry.EnvVar{Name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", Value: "http://collector:4318/v1/traces"}
	if len(env) != 1 || env[0] != want {
		t.Errorf("child env without a span or an endpoint flag: %v, want the traces endpoint alone", env)
	}
}

func TestChildEnvAndExtractEnvDoNothingWhileOff(t *testing.T) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(name, "") // as where nothing asks for tracing
	}
	stop, err := telemetry.Setup(context.Background(), telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop(context.Background())
	ctx := context.Background()
	if telemetry.Enabled() || telemetry.ChildEnv(ctx) != nil {
		t.Fatalf("tracing off: enabled %v, child env %v", telemetry.Enabled(), telemetry.ChildEnv(ctx))
	}
	carried := environ(telemetry.EnvVar{Name: "TRACEPARENT", Value: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	if got := telemetry.ExtractEnv(ctx, carried); got != ctx {
		t.Error("tracing off, ExtractEnv changed the context")
	}
}
