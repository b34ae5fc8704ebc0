package cli

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/telemetry"
	"github.com/parentrag/parentrag/internal/telemetry/otelcoltest"
)

// TestLocalIndexTracesItsBuildToACollector runs parentrag local index on a
// folder and a file with --otlp-endpoint naming a real OpenTelemetry
// Collector (hack/otelcol) and TRACEPARENT set, as a traced CI job would:
// the command's span is the child of TRACEPARENT's; below it the sources
// are read (one extract span per path) and the revision is built, its
// stages (split, embed, index, save) below the build span in the order
// they ran, each within it; the spans count what they read and made.
func TestLocalIndexTracesItsBuildToACollector(t *testing.T) {
	col := otelcoltest.Start(t, "127.0.0.1")
	dir := t.TempDir()
	corpus := testCorpus(t, dir)
	extra := writeFile(t, dir, "savanna.html", "<html><head><title>Savanna</title></head><body><h1>Savanna</h1><p>Grassland with scattered trees, where zebras and lions live.</p></body></html>")
	const trace, caller = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	t.Setenv("TRACEPARENT", "00-"+trace+"-"+caller+"-01")
	out := filepath.Join(dir, "index")
	mustExecute(t, "local", "index", "--quiet", "--policy", writeFile(t, dir, "policy.yaml", testPolicy), "--otlp-endpoint", col.Endpoint, "--out", out, corpus, extra)

	spans := col.AwaitTraces(t, []string{trace})
	for _, s := range spans {
		t.Logf("span %-24s %10s  id %s parent %s", s.Name, s.Duration().Round(time.Microsecond), s.SpanID, s.ParentSpanID)
	}
	root := otelcoltest.Find(spans, trace, telemetry.SpanLocalIndex)
	if root == nil || root.ParentSpanID != caller {
		t.Fatalf("no %s span with TRACEPARENT's span as parent: %+v", telemetry.SpanLocalIndex, root)
	}
	read := childNamed(t, spans, root, telemetry.SpanReadSources)
	if read.Attr("parentrag.sources") != "2" || read.Attr("parentrag.documents") != "4" {
		t.Errorf("read_sources counts %s sources and %s documents, want 2 and 4", read.Attr("parentrag.sources"), read.Attr("parentrag.documents"))
	}
	extracted := map[string]string{}
	for _, s := range spans {
		if s.Name == telemetry.SpanExtract && s.ParentSpanID == read.SpanID {
			extracted[s.Attr("parentrag.source")] = s.Attr("parentrag.documents")
		}
	}
	if len(extracted) != 2 || extracted[corpus] != "3" || extracted[extra] != "1" {
		t.Errorf("extract spans under read_sources %v, want %s: 3 and %s: 1", extracted, corpus, extra)
	}
	b := childNamed(t, spans, root, telemetry.SpanBuild)
	if b.Attr("parentrag.documents") != "4" || b.Attr("parentrag.children") == "" || b.Attr("parentrag.children") == "0" {
		t.Errorf("the build span counts %s documents and %s children", b.Attr("parentrag.documents"), b.Attr("parentrag.children"))
	}
	if b.StartNanos() < read.EndNanos() {
		t.Errorf("the build started before the sources were read")
	}
	last := b.StartNanos()
	for _, name := range []string{telemetry.SpanSplit, telemetry.SpanEmbed, telemetry.SpanIndex, telemetry.SpanSave} {
		s := childNamed(t, spans, b, name)
		if s.StartNanos() < last || s.EndNanos() > b.EndNanos() {
			t.Errorf("%s ran from %d to %d, not after the stage before (%d) within the build (to %d)", name, s.StartNanos(), s.EndNanos(), last, b.EndNanos())
		}
		last = s.EndNanos()
	}
}

// childNamed is the span named name whose parent is parent.
func childNamed(t *testing.T, spans []otelcoltest.Span, parent *otelcoltest.Span, name string) *otelcoltest.Span {
	t.Helper()
	for i := range spans {
		if spans[i].Name == name && spans[i].ParentSpanID == parent.SpanID {
			return &spans[i]
		}
	}
	t.Fatalf("no %s span below %s", name, parent.Name)
	return nil
}
