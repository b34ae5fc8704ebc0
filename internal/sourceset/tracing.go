package sourceset

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// extract adds one source's documents to set (addOne) in a span of the
// extract stage, which names the source and its kind and counts the
// documents it gave and the problems it reported.
func (r *Reader) extract(ctx context.Context, src v1alpha1.Source, fetched fetchedSource, set *Set) error {
	ctx, span := telemetry.Start(ctx, telemetry.SpanExtract)
	docs, problems := set.Count(), set.ErrorCount
	err := r.addOne(ctx, src, fetched, set)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("parentrag.source", src.Name), attribute.String("parentrag.source_kind", sourceKind(src)),
			attribute.Int("parentrag.documents", set.Count()-docs), attribute.Int("parentrag.source_errors", set.ErrorCount-problems))
	}
	telemetry.End(span, err)
	return err
}

// endRead ends the span of reading sources sources with what set holds,
// failed when err is not nil.
func endRead(span trace.Span, sources int, set *Set, err error) {
	if err == nil && span.IsRecording() {
		span.SetAttributes(attribute.Int("parentrag.sources", sources), attribute.Int("parentrag.documents", set.Count()),
			attribute.Int("parentrag.source_errors", set.ErrorCount))
	}
	telemetry.End(span, err)
}

// sourceKind names what a source reads, as addOne tells them apart.
func sourceKind(src v1alpha1.Source) string {
	switch {
	case len(src.Inline) > 0:
		return "inline"
	case src.ConfigMap != nil:
		return "configMap"
	case src.Selector != nil:
		return "selector"
	case src.URL != nil:
		return "url"
	case src.SourceRef != nil:
		return "sourceRef"
	}
	return ""
}
