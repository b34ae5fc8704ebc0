package controllers_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/telemetry"
	"github.com/parentrag/parentrag/internal/telemetry/telemetrytest"
)

// collectorEndpoint is where the operator of these tests says it sends
// its spans; they go to memory instead.
const collectorEndpoint = "http://otel-collector.monitoring:4318"

// TestIndexingJobCarriesTheReconcileSpan creates two Corpora built by
// Jobs. Tracing off, the Job's container has no trace context and no
// exporter variable: its spec is what it was before tracing existed.
// Tracing on, it carries TRACEPARENT, naming the span of the reconcile
// that created it, and the operator's endpoint; the Job's command, played
// here in process from that environment, traces its build as that span's
// child, with its stages below.
func TestIndexingJobCarriesTheReconcileSpan(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	untraced := createAndWaitJob(t, claimCorpus(ns, p.Name, corev1.ReadWriteOnce))
	if vars := tracingVars(untraced); len(vars) > 0 {
		t.Errorf("tracing off, the Job's container has %v", vars)
	}

	rec := telemetrytest.Start(t, collectorEndpoint)
	c := claimCorpus(ns, p.Name, corev1.ReadWriteOnce)
	job := createAndWaitJob(t, c)
	vars := tracingVars(job)
	if len(vars) != 2 || vars["OTEL_EXPORTER_OTLP_ENDPOINT"] != collectorEndpoint {
		t.Fatalf("tracing on, the Job's container has %v, want TRACEPARENT and the endpoint", vars)
	}
	parts := strings.Split(vars["TRACEPARENT"], "-")
	if len(parts) != 4 || parts[0] != "00" || parts[3] != "01" {
		t.Fatalf("TRACEPARENT %q is not a sampled W3C traceparent", vars["TRACEPARENT"])
	}
	ctx := telemetry.ExtractEnv(context.Background(), func(name string) string { return vars[name] })
	if err := runIndexerIn(t, ctx, c, job, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 30*time.Second)
	spans := rec.Stop(t)

	reconcile := spanWithID(spans, parts[2])
	if reconcile == nil || reconcile.Name != telemetry.SpanReconcile || reconcile.SpanContext.TraceID().String() != parts[1] || attr(reconcile, "parentrag.corpus") != c.Name {
		t.Fatalf("TRACEPARENT names %+v, want the span of a reconcile of %s", reconcile, c.Name)
	}
	logTree(t, spans, reconcile, "")
	indexJob := childrenOf(spans, reconcile, telemetry.SpanIndexJob)
	if len(indexJob) != 1 {
		t.Fatalf("%d %s spans below the reconcile that created the Job, want 1", len(indexJob), telemetry.SpanIndexJob)
	}
	if got := names(childrenOf(spans, &indexJob[0], "")); !slices.Equal(got, []string{telemetry.SpanReadSources, telemetry.SpanBuild, telemetry.SpanVerify}) {
		t.Errorf("below the Job's span %v, want read_sources, build and verify", got)
	}
}

// TestInProcessBuildIsTraced builds a Corpus with a quality gate in the
// operator with tracing on: the reconcile that builds it reads the
// sources, builds (split, embed, index, save), stores the ConfigMaps,
// verifies the revision and measures the gate, each a span below it; the
// verification's and the gate's queries are counted, not traced one by
// one.
func TestInProcessBuildIsTraced(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	golden := newGolden(t, ns, goldenQueries)
	rec := telemetrytest.Start(t, "")
	c := gatedCorpus(ns, p.Name, golden, v1alpha1.QualityGate{MinHitRate: "0.6"})
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 30*time.Second)
	// The reconcile writes the status before its span ends.
	spans := rec.StopWhen(t, 10*time.Second, func(spans tracetest.SpanStubs) bool {
		build := buildSpan(spans, c.Status.ActiveRevision.Name)
		return build != nil && spanWithID(spans, build.Parent.SpanID().String()) != nil
	})
	build := buildSpan(spans, c.Status.ActiveRevision.Name)
	if build == nil {
		t.Fatalf("no build span of revision %s among %d spans", c.Status.ActiveRevision.Name, len(spans))
	}
	if got := names(childrenOf(spans, build, "")); !slices.Equal(got, []string{telemetry.SpanSplit, telemetry.SpanEmbed, telemetry.SpanIndex, telemetry.SpanSave}) {
		t.Errorf("below the build %v, want split, embed, index and save", got)
	}
	reconcile := spanWithID(spans, build.Parent.SpanID().String())
	if reconcile == nil || reconcile.Name != telemetry.SpanReconcile || attr(reconcile, "parentrag.corpus") != c.Name {
		t.Fatalf("the build's parent is %+v, want a reconcile of %s", reconcile, c.Name)
	}
	logTree(t, spans, reconcile, "")
	below := childrenOf(spans, reconcile, "")
	want := []string{telemetry.SpanReadSources, telemetry.SpanBuild, telemetry.SpanStore, telemetry.SpanVerify, telemetry.SpanGate}
	if got := names(below); !slices.Equal(got, want) {
		t.Fatalf("below the reconcile that built %v, want %v", got, want)
	}
	verify, gate := &below[3], &below[4]
	if attr(verify, "parentrag.result") != "Passed" || attr(gate, "parentrag.result") != "Passed" || attr(gate, "parentrag.queries") != "3" {
		t.Errorf("verify says %q, the gate %q on %s queries; want Passed, Passed on 3", attr(verify, "parentrag.result"), attr(gate, "parentrag.result"), attr(gate, "parentrag.queries"))
	}
	for _, s := range []*tracetest.SpanStub{verify, gate} {
		if got := names(childrenOf(spans, s, "")); len(got) > 0 {
			t.Errorf("the queries of %s are traced one by one: %v", s.Name, got)
		}
	}
}

// logTree logs the span and those below it, indented, with how long each
// lasted.
func logTree(t *testing.T, spans tracetest.SpanStubs, s *tracetest.SpanStub, indent string) {
	t.Logf("%-30s %10s", indent+s.Name, s.EndTime.Sub(s.StartTime).Round(time.Microsecond))
	children := childrenOf(spans, s, "")
	slices.SortFunc(children, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	for i := range children {
		logTree(t, spans, &children[i], indent+"  ")
	}
}

// tracingVars are the variables of the Job's container that carry a trace
// or configure an exporter.
func tracingVars(job *batchv1.Job) map[string]string {
	out := map[string]string{}
	for _, v := range job.Spec.Template.Spec.Containers[0].Env {
		if strings.HasPrefix(v.Name, "OTEL_") || slices.Contains([]string{"TRACEPARENT", "TRACESTATE", "BAGGAGE"}, v.Name) {
			out[v.Name] = v.Value
		}
	}
	return out
}

// buildSpan is the span of the build of revision, or nil.
func buildSpan(spans tracetest.SpanStubs, revision string) *tracetest.SpanStub {
	for i := range spans {
		if s := &spans[i]; s.Name == telemetry.SpanBuild && attr(s, "parentrag.revision") == revision {
			return s
		}
	}
	return nil
}

// spanWithID is the span of that id (hex), or nil.
func spanWithID(spans tracetest.SpanStubs, id string) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].SpanContext.SpanID().String() == id {
			return &spans[i]
		}
	}
	return nil
}

// childrenOf are the spans below parent named name (any name when ""),
// in the order they ended.
func childrenOf(spans tracetest.SpanStubs, parent *tracetest.SpanStub, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Parent.SpanID() == parent.SpanContext.SpanID() && s.SpanContext.TraceID() == parent.SpanContext.TraceID() && (name == "" || s.Name == name) {
			out = append(out, s)
		}
	}
	return out
}

// names are the spans' names.
func names(spans []tracetest.SpanStub) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// attr is the span's attribute key, as text; "" when it has none.
func attr(s *tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}
