package build_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/parentrag/parentrag/internal/policy/policytest"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/telemetry"
	"github.com/parentrag/parentrag/internal/telemetry/telemetrytest"
)

// TestRunTracesItsStages builds with tracing on, into the embedded store
// and into segments: the build is one span, the child of the caller's,
// with its stages below it in the order they ran, and it records the
// revision's counts.
func TestRunTracesItsStages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		store  bundle.VectorStoreRef
		stages []string
	}{
		{"embedded", bundle.VectorStoreRef{}, []string{telemetry.SpanSplit, telemetry.SpanEmbed, telemetry.SpanIndex, telemetry.SpanSave}},
		{"segments", segments, []string{telemetry.SpanSplit, telemetry.SpanSave}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := telemetrytest.Start(t, "")
			ctx, caller := telemetry.Start(context.Background(), "caller")
			req := policytest.LexicalRequest(t, docs(), tc.store, filepath.Join(t.TempDir(), "bundle"))
			built, err := build.Run(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			caller.End()
			spans := rec.Stop(t)
			b := spanNamed(t, spans, telemetry.SpanBuild)
			if b.Parent.SpanID() != caller.SpanContext().SpanID() {
				t.Errorf("the build's parent is %s, want the caller's span", b.Parent.SpanID())
			}
			var stages []string
			for _, s := range spans { // in the order they ended, which is the order they ran
				if s.Parent.SpanID() == b.SpanContext.SpanID() {
					stages = append(stages, s.Name)
				}
			}
			if !slices.Equal(stages, tc.stages) {
				t.Errorf("stages under the build %v, want %v", stages, tc.stages)
			}
			want := map[attribute.Key]attribute.Value{
				"parentrag.revision": attribute.StringValue(req.Revision), "parentrag.documents": attribute.IntValue(3),
				"parentrag.children": attribute.IntValue(built.Manifest.Children), "parentrag.parents": attribute.IntValue(built.Manifest.Parents),
			}
			for _, kv := range b.Attributes {
				if v, ok := want[kv.Key]; ok && v == kv.Value {
					delete(want, kv.Key)
				}
			}
			if len(want) > 0 {
				t.Errorf("the build span lacks %v (has %v)", want, b.Attributes)
			}
		})
	}
}

// TestRunMarksAFailedBuild fails a build (a bundle already in the way)
// and finds its span failed with the error.
func TestRunMarksAFailedBuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	req := policytest.LexicalRequest(t, docs(), bundle.VectorStoreRef{}, dir)
	if _, err := build.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	rec := telemetrytest.Start(t, "")
	_, err := build.Run(context.Background(), req)
	if err == nil {
		t.Fatal("a second build into the same directory without Replace succeeded")
	}
	b := spanNamed(t, rec.Stop(t), telemetry.SpanBuild)
	if b.Status.Code != codes.Error || b.Status.Description != err.Error() {
		t.Errorf("the failed build's span has status %v %q, want Error %q", b.Status.Code, b.Status.Description, err)
	}
}

// spanNamed is the one span named name.
func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %s among %d, want 1", len(found), name, len(spans))
	}
	return found[0]
}
