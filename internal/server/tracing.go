package server

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/parentrag/parentrag/internal/telemetry"
)

// traced starts the server span of a request to endpoint, the child of
// the span its W3C traceparent header names, whatever the protocol
// (/v1/retrieve, LangChain, OpenAI vector-store search, MCP). Off, it
// returns r as it is.
func traced(r *http.Request, endpoint string) (*http.Request, trace.Span) {
	if !telemetry.Enabled() {
		return r, nil
	}
	ctx := telemetry.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := telemetry.Start(ctx, r.Method+" "+endpoint, trace.SpanKindServer)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", endpoint),
			attribute.String("url.path", r.URL.Path))
	}
	return r.WithContext(ctx), span
}

// endSpan ends a request's span with its status code; 5xx marks it failed.
func endSpan(span trace.Span, code int) {
	if span == nil {
		return
	}
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("http.response.status_code", code))
		if code >= 500 {
			span.SetStatus(codes.Error, http.StatusText(code))
		}
	}
	span.End()
}

// stage runs f in a span named name, failed when f fails.
func stage(ctx context.Context, name string, f func(context.Context) error) error {
	ctx, span := telemetry.Start(ctx, name)
	err := f(ctx)
	telemetry.Fail(span, err)
	span.End()
	return err
}
