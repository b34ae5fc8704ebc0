package sourceset

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
	dt "github.com/parentrag/parentrag/internal/document/documenttest"
	"github.com/parentrag/parentrag/internal/kubetest"
	"github.com/parentrag/parentrag/internal/telemetry"
	"github.com/parentrag/parentrag/internal/telemetry/telemetrytest"
)

// TestReadTracesEachSource reads an inline source and a ConfigMap holding
// a PDF and a broken one with tracing on: the read is one span, with one
// extract span per source below it, each naming its source and counting
// its documents and problems.
func TestReadTracesEachSource(t *testing.T) {
	manual := dt.Manual(t, dt.ManualOptions{})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "docs"},
		BinaryData: map[string][]byte{"manual.pdf": manual, "broken.pdf": manual[:len(manual)/2]}}
	var reads kubetest.Reads
	r := &Reader{Client: countingServer(t, &reads, cm), Namespace: "ns"}
	rec := telemetrytest.Start(t, "")
	_, err := r.Read(t.Context(), []v1alpha1.Source{
		{Name: "notes", Inline: []v1alpha1.InlineDocument{{ID: "a.html", Text: "<h1>A</h1><p>Alpha.</p>"}, {ID: "b", Text: "Beta."}}},
		{Name: "manuals", ConfigMap: &v1alpha1.ConfigMapSource{Name: "docs"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	spans := rec.Stop(t)
	if len(spans) != 3 {
		t.Fatalf("%d spans, want read_sources and two extract", len(spans))
	}
	read := spans[2]
	if read.Name != telemetry.SpanReadSources || read.Parent.IsValid() || !hasAttributes(read.Attributes, attribute.Int("parentrag.sources", 2), attribute.Int("parentrag.documents", 3), attribute.Int("parentrag.source_errors", 1)) {
		t.Errorf("read span %s (parent %v) %v", read.Name, read.Parent.SpanID(), read.Attributes)
	}
	for i, want := range [][]attribute.KeyValue{
		{attribute.String("parentrag.source", "notes"), attribute.String("parentrag.source_kind", "inline"), attribute.Int("parentrag.documents", 2), attribute.Int("parentrag.source_errors", 0)},
		{attribute.String("parentrag.source", "manuals"), attribute.String("parentrag.source_kind", "configMap"), attribute.Int("parentrag.documents", 1), attribute.Int("parentrag.source_errors", 1)},
	} {
		s := spans[i]
		if s.Name != telemetry.SpanExtract || s.Parent.SpanID() != read.SpanContext.SpanID() || !hasAttributes(s.Attributes, want...) {
			t.Errorf("span %d: %s under %s with %v, want %s under the read with %v", i, s.Name, s.Parent.SpanID(), s.Attributes, telemetry.SpanExtract, want)
		}
	}
}

// hasAttributes reports whether attrs hold every one of want.
func hasAttributes(attrs []attribute.KeyValue, want ...attribute.KeyValue) bool {
	for _, w := range want {
		found := false
		for _, a := range attrs {
			found = found || a == w
		}
		if !found {
			return false
		}
	}
	return true
}
