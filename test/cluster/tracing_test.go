//go:build cluster

package cluster_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/telemetry"
	"github.com/parentrag/parentrag/internal/telemetry/otelcoltest"
)

// TestTracesOfABuildAndAQueryOnTheNode runs an OpenTelemetry Collector on
// this machine where pods reach it, turns tracing on in the operator
// (--otlp-endpoint) and in the samples' Retriever (spec.tracing), and
// moves the docs sample onto a claim, so that an indexing Job builds it.
// The collector receives the reconcile that created the Job with the Job's
// build below it, in one trace, and a query sent through the Service with
// a traceparent as the server span of that trace with its stages below.
func TestTracesOfABuildAndAQueryOnTheNode(t *testing.T) {
	col := otelcoltest.Start(t, envOr("PARENTRAG_HOST_ADDR", "10.244.0.1"))
	traceOperator(t, col.Endpoint)
	ns := newNamespace(t, "tracing")
	applyKustomization(t, "config/samples", ns)
	c, r := waitSamplesReady(t, ns)
	applyKustomization(t, "config/samples/claims", ns)
	eventually(t, 5*time.Minute, "a revision built by a Job", func() (bool, error) {
		get(t, c)
		lb := c.Status.LastBuild
		return lb != nil && lb.Mode == v1alpha1.IndexingJob && lb.Result == "Succeeded", fmt.Errorf("last build %+v", lb)
	})

	spans := col.Await(t, time.Minute, func(spans []otelcoltest.Span) bool { return jobBelowReconcile(spans, ns) != nil })
	job := jobBelowReconcile(spans, ns)
	logTrace(t, spans, job.TraceID)
	for _, stage := range []string{telemetry.SpanReadSources, telemetry.SpanBuild, telemetry.SpanSplit, telemetry.SpanSave, telemetry.SpanVerify} {
		if otelcoltest.FindBelow(spans, job, stage) == nil {
			t.Errorf("no %s span below the Job's %s", stage, telemetry.SpanIndexJob)
		}
	}

	patch := client.MergeFrom(r.DeepCopy())
	r.Spec.Tracing = &v1alpha1.RetrieverTracing{OTLPEndpoint: col.Endpoint}
	if err := k8s.Patch(context.Background(), r, patch); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, r, 3*time.Minute)
	e := endpointOf(t, ns, r.Name)
	e.waitAnswering(t)
	const caller = "10f067aa0ba902b7"
	trace, spans := tracedQuery(t, col, e, caller)
	logTrace(t, spans, trace)
	root := otelcoltest.Find(spans, trace, "POST /v1/retrieve")
	if root == nil || root.ParentSpanID != caller {
		t.Fatalf("no server span with the caller's span as parent: %+v", root)
	}
	for _, stage := range []string{"parentrag.admission", "parentrag.analyze", "parentrag.child_search", "parentrag.parent_fetch"} {
		if otelcoltest.FindBelow(spans, root, stage) == nil {
			t.Errorf("no %s span below the server span", stage)
		}
	}
}

// tracedQuery sends queries through e, one a second, each with a
// traceparent of a new trace whose parent span is caller, until the
// collector holds a span of one of them (at most a minute), and returns
// that trace and the spans. The Retriever is Ready once the Deployment has
// rolled out, while kube-proxy may still send a query or two to a pod of
// the previous template, untraced, answering through its shutdown delay.
func tracedQuery(t *testing.T, col *otelcoltest.Collector, e *serviceEndpoint, caller string) (string, []otelcoltest.Span) {
	t.Helper()
	var sent []string
	var last time.Time
	trace := ""
	spans := col.Await(t, time.Minute, func(spans []otelcoltest.Span) bool {
		for _, s := range spans {
			if slices.Contains(sent, s.TraceID) {
				trace = s.TraceID
				return true
			}
		}
		if time.Since(last) >= time.Second {
			id := fmt.Sprintf("5cf92f3577b34da6a3ce929d0e0e%04x", len(sent))
			if code := postWithTraceparent(t, e, "00-"+id+"-"+caller+"-01"); code != http.StatusOK {
				t.Fatalf("the traced query was answered %d", code)
			}
			sent = append(sent, id)
			last = time.Now()
		}
		return false
	})
	t.Logf("trace %s arrived, of %d traced queries sent", trace, len(sent))
	return trace, spans
}

// traceOperator adds --otlp-endpoint to the operator's arguments until the
// test ends, waiting for each rollout.
func traceOperator(t *testing.T, endpoint string) {
	t.Helper()
	setArgs := func(change func([]string) []string) {
		var d appsv1.Deployment
		key := client.ObjectKey{Namespace: devcluster.ManagerNamespace, Name: operatorName}
		if err := k8s.Get(context.Background(), key, &d); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Template.Spec.Containers[0].Args = change(d.Spec.Template.Spec.Containers[0].Args)
		if err := k8s.Patch(context.Background(), &d, patch); err != nil {
			t.Fatal(err)
		}
		if err := waitOperatorAvailable(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	flag := "--otlp-endpoint=" + endpoint
	setArgs(func(args []string) []string { return append(args, flag) })
	t.Cleanup(func() {
		setArgs(func(args []string) []string {
			return slices.DeleteFunc(args, func(a string) bool { return a == flag })
		})
	})
}

// jobBelowReconcile returns the span of an indexing Job of namespace ns
// whose parent is the operator's reconcile span, or nil.
func jobBelowReconcile(spans []otelcoltest.Span, ns string) *otelcoltest.Span {
	for i := range spans {
		job := &spans[i]
		if job.Name != telemetry.SpanIndexJob || job.Attr("k8s.namespace.name") != ns {
			continue
		}
		for j := range spans {
			if p := &spans[j]; p.SpanID == job.ParentSpanID && p.TraceID == job.TraceID && p.Name == telemetry.SpanReconcile {
				return job
			}
		}
	}
	return nil
}

// logTrace logs the spans of one trace, as the docs show them.
func logTrace(t *testing.T, spans []otelcoltest.Span, trace string) {
	t.Helper()
	for _, s := range spans {
		if s.TraceID == trace {
			t.Logf("span %-26s %10s  id %s parent %s", s.Name, s.Duration().Round(time.Microsecond), s.SpanID, s.ParentSpanID)
		}
	}
}

// postWithTraceparent asks the Service one question with a traceparent
// header and returns the status code.
func postWithTraceparent(t *testing.T, e *serviceEndpoint, traceparent string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/v1/retrieve", strings.NewReader(`{"query":"How does a new revision roll out to the query pods?"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", traceparent)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
