package controllers_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

func TestAPIServerRefusesInvalidRerank(t *testing.T) {
	ns := newNamespace(t)
	for _, tc := range []struct {
		name   string
		rerank v1alpha1.RetrieverRerank
		want   string
	}{
		{"no scheme", v1alpha1.RetrieverRerank{URL: "reranker:8080"},
			"rerank.url must be an http:// or https:// URL, such as http://reranker.models:8080"},
		{"model in the TEI convention", v1alpha1.RetrieverRerank{URL: "http://reranker:8080", Model: "bge-reranker"},
			"rerank.model is sent only in the Cohere convention: remove it, or set convention: Cohere"},
		{"zero timeout", v1alpha1.RetrieverRerank{URL: "http://reranker:8080", Timeout: &metav1.Duration{}},
			"rerank.timeout must be more than 0s and at most 60s, such as 2s or 500ms"},
		{"unknown convention", v1alpha1.RetrieverRerank{URL: "http://reranker:8080", Convention: "Voyage"},
			`spec.rerank.convention: Unsupported value: "Voyage": supported values: "TEI", "Cohere"`},
		{"too many retries", v1alpha1.RetrieverRerank{URL: "http://reranker:8080", Retries: ptr.To[int32](9)},
			"spec.rerank.retries: Invalid value: 9: spec.rerank.retries in body should be less than or equal to 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reranked"},
				Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "c"}, Rerank: &tc.rerank}}
			expectInvalid(t, toUnstructured(t, rt), tc.want)
		})
	}
}

// A Retriever's spec.rerank reaches its query pods as the server's
// --rerank-* flags, the API's defaults included, and leaving it out
// leaves them out.
func TestRetrieverRerankShapesTheDeployment(t *testing.T) {
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reranked"},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name}, Rerank: &v1alpha1.RetrieverRerank{
			URL: "http://reranker.models:8080", Convention: v1alpha1.RerankCohere, Model: "rerank-v3.5",
			Target: v1alpha1.RerankChildren, Timeout: &metav1.Duration{Duration: 1500 * time.Millisecond}, Retries: ptr.To[int32](0)}}}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	d := deploymentWith(t, rt, func(d *appsv1.Deployment) bool { return true })
	want := []string{"--rerank-url=http://reranker.models:8080", "--rerank-convention=Cohere", "--rerank-model=rerank-v3.5",
		"--rerank-target=Children", "--rerank-top-n=20", "--rerank-timeout=1.5s", "--rerank-retries=0"}
	if !hasArgs(d, want...) {
		t.Fatalf("args %v, want %v among them", d.Spec.Template.Spec.Containers[0].Args, want)
	}
	updateRetriever(t, rt, func(r *v1alpha1.Retriever) { r.Spec.Rerank = nil })
	deploymentWith(t, rt, withoutArg("--rerank"))
}

// withoutArg holds for a Deployment whose server has no argument starting
// with prefix.
func withoutArg(prefix string) func(*appsv1.Deployment) bool {
	return func(d *appsv1.Deployment) bool {
		for _, a := range d.Spec.Template.Spec.Containers[0].Args {
			if contains(a, prefix) {
				return false
			}
		}
		return true
	}
}

// A Retriever's spec.tracing reaches its query pods as --otlp-endpoint,
// and the API server refuses an endpoint that is not an http(s) URL.
func TestRetrieverTracingShapesTheDeployment(t *testing.T) {
	ns := newNamespace(t)
	bad := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "traced"},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "c"},
			Tracing: &v1alpha1.RetrieverTracing{OTLPEndpoint: "otel-collector:4318"}}}
	expectInvalid(t, toUnstructured(t, bad), "tracing.otlpEndpoint must be an http:// or https:// URL")
	_, c := readyCorpus(t, ns)
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "traced"},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name},
			Tracing: &v1alpha1.RetrieverTracing{OTLPEndpoint: "http://otel-collector.monitoring:4318"}}}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	d := deploymentWith(t, rt, func(d *appsv1.Deployment) bool { return true })
	if !hasArgs(d, "--otlp-endpoint=http://otel-collector.monitoring:4318") {
		t.Fatalf("args %v lack --otlp-endpoint", d.Spec.Template.Spec.Containers[0].Args)
	}
	updateRetriever(t, rt, func(r *v1alpha1.Retriever) { r.Spec.Tracing = nil })
	deploymentWith(t, rt, withoutArg("--otlp-endpoint"))
}
