package inspector

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCut measures what one preview costs the server at the largest
// document it takes by default (64 KiB) and at four times that: the
// default policy, and the finest cuts a policy can ask for, which the
// server then refuses for their number of units but has paid for. It
// reports the parents and children of each cut and the most heap it held
// above what was in use before, sampled every millisecond.
func BenchmarkCut(b *testing.B) {
	line := "Sailing upwind means tacking. The boat zigzags across the wind! Does a reef help? Yes.\n"
	for _, size := range []int{64 << 10, 256 << 10} {
		doc, _, err := ReadDocument("sailing.txt", strings.Repeat(line, size/len(line)))
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct{ name, policy string }{
			{"default", ""},
			{"finest", "spec: {parent: {chunkSize: 2}, child: {chunkSize: 1}}"},
			{"finest-window", "spec: {strategy: SentenceWindow, window: {sentences: 10}, child: {chunkSize: 1}}"},
		} {
			compiled, err := CompilePolicy(c.policy)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%dKiB", c.name, size>>10), func(b *testing.B) {
				b.ReportAllocs()
				var units int
				peak := sampleHeap()
				for b.Loop() {
					l, err := Cut(doc, compiled, 0)
					if err != nil {
						b.Fatal(err)
					}
					units = len(l.Parents) + len(l.Children)
				}
				b.ReportMetric(float64(units), "units")
				b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
			})
		}
	}
}

// sampleHeap collects the garbage, then samples the heap in use every
// millisecond until the returned function is called; that returns the
// most it grew above the heap in use at the start.
func sampleHeap() func() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapInuse
	var most atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > base && m.HeapInuse-base > most.Load() {
				most.Store(m.HeapInuse - base)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return most.Load()
	}
}
