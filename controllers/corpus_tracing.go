package controllers

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/parentrag/parentrag/internal/telemetry"
)

// startReconcile starts the span of one reconcile of a Corpus, the parent
// of its steps' spans and of the indexing Job it creates; while tracing is
// off it returns ctx and a span that records nothing.
func startReconcile(ctx context.Context, req ctrl.Request) (context.Context, trace.Span) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanReconcile)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("k8s.namespace.name", req.Namespace), attribute.String("parentrag.corpus", req.Name))
	}
	return ctx, span
}

// recordRevision names, on the reconcile's span, the revision the Corpus
// calls for.
func recordRevision(ctx context.Context, revision string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String("parentrag.revision", revision))
	}
}

// jobTraceEnv is what an indexing Job created under ctx's span needs for
// its spans to be that span's children and to go where the operator's go
// (telemetry.ChildEnv); nothing while tracing is off, so that the Job's
// spec is the same as before tracing existed.
func jobTraceEnv(ctx context.Context) []corev1.EnvVar {
	vars := telemetry.ChildEnv(ctx)
	if len(vars) == 0 {
		return nil
	}
	env := make([]corev1.EnvVar, len(vars))
	for i, v := range vars {
		env[i] = corev1.EnvVar{Name: v.Name, Value: v.Value}
	}
	return env
}
