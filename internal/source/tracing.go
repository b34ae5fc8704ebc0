package source

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/parentrag/parentrag/internal/telemetry"
)

// extract reads one path (loadPath) in a span of the extract stage,
// which names the path and counts the documents read, the files refused
// and those left out.
func extract(ctx context.Context, path string) (out []found, refused, leftOut []error, err error) {
	_, span := telemetry.Start(ctx, telemetry.SpanExtract)
	out, refused, leftOut, err = loadPath(path)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("parentrag.source", path), attribute.Int("parentrag.documents", len(out)),
			attribute.Int("parentrag.source_errors", len(refused)), attribute.Int("parentrag.left_out", len(leftOut)))
	}
	telemetry.End(span, err)
	return out, refused, leftOut, err
}

// endRead ends the span of reading paths with what l holds, failed when
// err is not nil.
func endRead(span trace.Span, paths int, l Loaded, err error) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("parentrag.sources", paths), attribute.Int("parentrag.documents", len(l.Docs)),
			attribute.Int("parentrag.source_errors", len(l.Refused)), attribute.Int("parentrag.left_out", len(l.LeftOut)+len(l.Empty)))
	}
	telemetry.End(span, err)
}
