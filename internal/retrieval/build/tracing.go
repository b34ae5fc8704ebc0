package build

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/parentrag/parentrag/internal/telemetry"
)

// traced runs f in a span of ctx named name, failed when f fails. Off, it
// costs f's call and one atomic load.
func traced[T any](ctx context.Context, name string, f func() (T, error)) (T, error) {
	_, span := telemetry.Start(ctx, name)
	v, err := f()
	telemetry.End(span, err)
	return v, err
}

// endBuild ends the span of a build, with the revision, its counts and
// what the caches gave when it succeeded, failed otherwise.
func endBuild(span trace.Span, req *Request, built Built, err error) {
	if span.IsRecording() {
		span.SetAttributes(attribute.String("parentrag.revision", req.Revision), attribute.Int("parentrag.documents", len(req.Docs)))
		if err == nil {
			m := built.Manifest
			span.SetAttributes(attribute.Int("parentrag.parents", m.Parents), attribute.Int("parentrag.children", m.Children),
				attribute.Int("parentrag.reused", built.Reused), attribute.Int64("parentrag.bytes", m.Bytes))
		}
	}
	telemetry.End(span, err)
}
