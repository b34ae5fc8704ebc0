package cmbundle

import (
	"os"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// BenchmarkPackEdit packs a revision of segments of the benchmarks'
// synthetic corpus (PARENTRAG_BENCH_MB, default 20 MB of text), then the
// revision after one edited document, and reports what storing the second
// beside the first writes: the ConfigMaps and MB it creates, against the
// ConfigMaps and MB the revision holds. ns/op is the second Pack.
func BenchmarkPackEdit(b *testing.B) {
	mb := 20.0
	if v := os.Getenv("PARENTRAG_BENCH_MB"); v != "" {
		var err error
		if mb, err = strconv.ParseFloat(v, 64); err != nil {
			b.Fatalf("PARENTRAG_BENCH_MB=%q: %v", v, err)
		}
	}
	docs, _ := synthtest.BenchDocuments(int(mb * 1e6))
	stored := map[string]bool{}
	for _, cm := range packShared(b, saveSegments(b, docs), "docs-rev-a") {
		stored[cm.Name] = true
	}
	docs[len(docs)/2].Text += "\n\nAn edited paragraph."
	dir := saveSegments(b, docs)
	var cms []corev1.ConfigMap
	for b.Loop() {
		cms = packShared(b, dir, "docs-rev-b")
	}
	var created, total int
	var createdBytes, totalBytes float64
	for _, cm := range cms {
		size := float64(cm.Size())
		total, totalBytes = total+1, totalBytes+size
		if !stored[cm.Name] {
			created, createdBytes = created+1, createdBytes+size
		}
	}
	b.ReportMetric(float64(total), "configmaps")
	b.ReportMetric(float64(created), "created-configmaps")
	b.ReportMetric(totalBytes/1e6, "MB")
	b.ReportMetric(createdBytes/1e6, "created-MB")
}
