// Package telemetry is parentrag's tracing: OpenTelemetry spans exported
// over OTLP, off by default. Setup turns it on from the standard OTEL_*
// variables or an explicit endpoint; until then, and after shutdown, Start
// costs one atomic load and allocates nothing.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// instrumentation names parentrag's tracer.
const instrumentation = "github.com/parentrag/parentrag"

// tracer is the tracer of the provider Setup started; nil while tracing
// is off.
var tracer atomic.Pointer[trace.Tracer]

// offSpan is the span Start returns while tracing is off.
var offSpan trace.Span = noop.Span{}

// Enabled reports whether spans are recorded and exported.
func Enabled() bool { return tracer.Load() != nil }

// Start starts a span named name, a child of ctx's span, of the given
// kind (trace.SpanKindInternal unless told). Off, it returns ctx and a
// span that records nothing. Callers set attributes only when
// span.IsRecording(), so that nothing is built for a span that is not.
func Start(ctx context.Context, name string, kind ...trace.SpanKind) (context.Context, trace.Span) {
	t := tracer.Load()
	if t == nil || ctx.Value(silenced{}) != nil {
		return ctx, offSpan
	}
	k := trace.SpanKindInternal
	if len(kind) > 0 {
		k = kind[0]
	}
	return (*t).Start(ctx, name, trace.WithSpanKind(k))
}

// silenced is the key of a context in which Start records nothing.
type silenced struct{}

// Silence returns ctx in which Start records nothing, tracing on or off:
// for work that runs many queries (a quality gate's golden queries, a
// verification's samples), so that it is one span, with counts, rather
// than a span per stage of each query.
func Silence(ctx context.Context) context.Context {
	if !Enabled() {
		return ctx
	}
	return context.WithValue(ctx, silenced{}, true)
}

// Fail marks span as failed with err, when err is not nil.
func Fail(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
}

// End ends span, failed with err when err is not nil.
func End(span trace.Span, err error) {
	Fail(span, err)
	span.End()
}

// Extract returns ctx with the remote span context that carrier's W3C
// traceparent (and baggage) name, while tracing is on.
func Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	if !Enabled() {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, carrier)
}

// Config says where spans go. Zero, the OTEL_* variables decide.
type Config struct {
	// Endpoint is the OTLP endpoint's URL (http://collector:4318 for
	// OTLP/HTTP, http://collector:4317 with Protocol grpc); set, tracing is
	// on whatever the variables say, unless OTEL_SDK_DISABLED=true.
	Endpoint string
	// ServiceName is service.name unless OTEL_SERVICE_NAME says otherwise.
	ServiceName string
	// Exporter, when set, receives the spans instead of the OTLP exporter
	// (a test's in-memory exporter, a benchmark's), and turns tracing on; Endpoint is
	// still what ChildEnv tells the processes this one starts.
	Exporter sdktrace.SpanExporter
}

// wanted reports whether tracing is asked for: an endpoint given, or the
// standard variables that name an OTLP exporter or endpoint.
func (c Config) wanted() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(os.Getenv("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return c.Endpoint != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// grpc reports whether the variables ask for OTLP over gRPC rather than
// the default, OTLP/HTTP with protobuf.
func grpc() bool {
	p := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if p == "" {
		p = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	return p == "grpc"
}

// Setup starts tracing when c or the OTEL_* variables ask for it: spans
// are batched to the OTLP endpoint, sampled as OTEL_TRACES_SAMPLER says
// (parent-based, always on, by default), and W3C traceparent and baggage
// are read and written. It returns a shutdown that flushes the spans and
// turns tracing off again; with tracing not asked for, a shutdown that does
// nothing.
func Setup(ctx context.Context, c Config) (func(context.Context) error, error) {
	if c.Exporter == nil && !c.wanted() {
		return func(context.Context) error { return nil }, nil
	}
	exp := c.Exporter
	if exp == nil {
		var err error
		if exp, err = exporter(ctx, c.Endpoint); err != nil {
			return nil, err
		}
	}
	return start(ctx, exp, c.ServiceName, exportVars(c.Endpoint))
}

// start turns tracing on with spans batched to exp and vars the variables
// ChildEnv passes on, and returns the shutdown that flushes the spans and
// turns tracing off.
func start(ctx context.Context, exp sdktrace.SpanExporter, serviceName string, vars []EnvVar) (func(context.Context) error, error) {
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", serviceName)), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	t := tp.Tracer(instrumentation)
	exportEnv.Store(&vars)
	tracer.Store(&t)
	return func(ctx context.Context) error {
		tracer.Store(nil)
		exportEnv.Store(nil)
		return tp.Shutdown(ctx)
	}, nil
}

// exporter is the OTLP exporter of endpoint, or of the variables when it
// is empty.
func exporter(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error) {
	if endpoint != "" {
		if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, errors.New("tracing: the OTLP endpoint must be an http or https URL, such as http://collector:4318")
		}
	}
	if grpc() {
		var opts []otlptracegrpc.Option
		if endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	var opts []otlptracehttp.Option
	if endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimRight(endpoint, "/")+"/v1/traces"))
	}
	return otlptracehttp.New(ctx, opts...)
}
