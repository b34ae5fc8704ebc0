package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// BenchmarkLocalIndexTracing runs `parentrag local index` in process on a
// folder of synthetic Markdown files (PARENTRAG_BENCH_MB of text, default
// 1), with tracing off (the default) and on (every span recorded and
// batched to an exporter that counts and drops them), side by side: the
// added time and allocations are tracing's cost on a build. It reports
// MB of corpus text per second and, on, the spans of one build.
func BenchmarkLocalIndexTracing(b *testing.B) {
	dir := b.TempDir()
	folder := filepath.Join(dir, "corpus")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		b.Fatal(err)
	}
	docs, size := synthtest.BenchDocumentsOfEnv(b, 1)
	for _, d := range docs {
		if err := os.WriteFile(filepath.Join(folder, d.ID+".md"), []byte(d.Text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	out := filepath.Join(dir, "index")
	args := []string{"local", "index", "--quiet", "--replace", "--out", out, folder}
	warm := NewRootCommand() // the first build also creates --out and fills the process's pools
	warm.SetArgs(args)
	warm.SetOut(io.Discard)
	if err := warm.ExecuteContext(context.Background()); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B) {
		cmd := NewRootCommand() // once: what a build costs, not its flags
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		b.ReportAllocs()
		for b.Loop() {
			if err := cmd.ExecuteContext(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	}
	b.Run("off", run)
	b.Run("on", func(b *testing.B) {
		exp := &countingExporter{}
		stop, err := telemetry.Setup(context.Background(), telemetry.Config{Exporter: exp, ServiceName: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		run(b)
		if err := stop(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(exp.spans.Load())/float64(b.N), "spans/op")
	})
}

// countingExporter counts the spans it is given and drops them.
type countingExporter struct{ spans atomic.Int64 }

// ExportSpans counts spans.
func (e *countingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.spans.Add(int64(len(spans)))
	return nil
}

// Shutdown does nothing.
func (e *countingExporter) Shutdown(context.Context) error { return nil }
