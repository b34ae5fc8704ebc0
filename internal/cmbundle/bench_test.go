package cmbundle

import (
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// BenchmarkPackEdit packs a revision of segments of the benchmarks'
// synthetic corpus (PARENTRAG_BENCH_MB, default 20 MB of text), then the
// revision after one edited document, and reports what storing the second
// beside the first writes: the ConfigMaps and MB it creates, against the
// ConfigMaps and MB the revision holds. ns/op is the second Pack leaving
// out the shards stored (what the operator runs); full-pack-ms packs the
// second revision whole, for comparison; manifest-kB is the size of its
// manifest ConfigMap, which must stay under 1 MiB.
func BenchmarkPackEdit(b *testing.B) {
	docs, _ := synthtest.BenchDocumentsOfEnv(b, 20)
	stored := map[string]bool{}
	for _, cm := range packShared(b, saveSegments(b, docs), "docs-rev-a") {
		stored[cm.Name] = true
	}
	docs[len(docs)/2].Text += "\n\nAn edited paragraph."
	dir := saveSegments(b, docs)
	started := time.Now()
	whole := packShared(b, dir, "docs-rev-b")
	full := time.Since(started)
	var created []corev1.ConfigMap
	for b.Loop() {
		var err error
		created, err = Pack(dir, "ns", "docs-rev-b", map[string]string{LabelCorpus: "docs"}, SharingSegments("docs-shared"),
			OmittingStored(func(n string) bool { return stored[n] }))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(whole)), "configmaps")
	b.ReportMetric(float64(len(created)), "created-configmaps")
	b.ReportMetric(sizeMB(whole), "MB")
	b.ReportMetric(sizeMB(created), "created-MB")
	b.ReportMetric(float64(full.Milliseconds()), "full-pack-ms")
	b.ReportMetric(float64(whole[len(whole)-1].Size())/1e3, "manifest-kB")
	b.ReportMetric(peakHeapHandingOut(b, dir), "each-peak-heap-MB")
}

// peakHeapHandingOut returns how much the Go heap grows, at most, while a
// Packer hands out every ConfigMap of the bundle in dir to a callback
// that keeps none (as the operator creates them), in MB: what storing a
// revision from scratch holds.
func peakHeapHandingOut(b *testing.B, dir string) float64 {
	b.StopTimer()
	defer b.StartTimer()
	p, err := NewPacker(dir, "ns", "docs-rev-b", map[string]string{LabelCorpus: "docs"}, SharingSegments("docs-shared"))
	if err != nil {
		b.Fatal(err)
	}
	var stats runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&stats)
	base, peak := stats.HeapAlloc, stats.HeapAlloc
	err = p.Each(func(*corev1.ConfigMap) error {
		runtime.ReadMemStats(&stats)
		peak = max(peak, stats.HeapAlloc)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return float64(peak-base) / 1e6
}

// sizeMB is the size of cms, in MB, as the API server stores them.
func sizeMB(cms []corev1.ConfigMap) float64 {
	total := 0
	for _, cm := range cms {
		total += cm.Size()
	}
	return float64(total) / 1e6
}
