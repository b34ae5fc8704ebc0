package indexjob

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// EndVerify ends the span of a verification (telemetry.SpanVerify) with
// its result: failed with err when it could not run, failed with the
// verification's message when the revision failed it.
func EndVerify(span trace.Span, v *v1alpha1.VerificationStatus, err error) {
	if err == nil && v != nil && span.IsRecording() {
		span.SetAttributes(attribute.String("parentrag.result", string(v.Result)), attribute.Int("parentrag.sampled_queries", v.SampledQueries))
		if v.Result != v1alpha1.CheckPassed {
			span.SetStatus(codes.Error, v.Message)
		}
	}
	telemetry.End(span, err)
}

// EndGate ends the span of a quality gate (telemetry.SpanGate) with its
// result, as EndVerify does.
func EndGate(span trace.Span, g *v1alpha1.QualityGateStatus, err error) {
	if err == nil && g != nil && span.IsRecording() {
		span.SetAttributes(attribute.String("parentrag.result", string(g.Result)), attribute.Int("parentrag.queries", g.Queries),
			attribute.String("parentrag.candidate_hit_rate", g.CandidateHitRate))
		if g.Result == v1alpha1.CheckFailed {
			span.SetStatus(codes.Error, g.Message)
		}
	}
	telemetry.End(span, err)
}
