package documenttest

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Usage is what running a function cost.
type Usage struct {
	// Took is the wall-clock time.
	Took time.Duration
	// Heap is how much the Go heap grew at most, sampled every
	// millisecond, after a collection so that garbage of earlier work does
	// not count.
	Heap uint64
	// RSS is how much the process's resident memory grew at most (Linux:
	// the peak is reset before the run), memory outside the Go heap
	// included, such as a WebAssembly instance's; 0 where unknown.
	RSS uint64
}

// Measure runs fn and returns what it cost.
func Measure(fn func()) Usage {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base, rssBase := read(), resetPeakRSS()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			mu.Lock()
			peak = max(peak, read())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	fn()
	u := Usage{Took: time.Since(start)}
	close(done)
	wg.Wait()
	if peak = max(peak, read()); peak > base {
		u.Heap = peak - base
	}
	if hwm := statusKB("VmHWM:"); rssBase > 0 && hwm > rssBase {
		u.RSS = hwm - rssBase
	}
	return u
}

// resetPeakRSS resets the process's peak resident memory and returns the
// resident memory now, or 0 where it cannot.
func resetPeakRSS() uint64 {
	if os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) != nil {
		return 0
	}
	return statusKB("VmRSS:")
}

// statusKB reads a memory figure of /proc/self/status in bytes.
func statusKB(field string) uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// Bounded runs fn and fails the test when it takes longer than d or makes
// the heap or the resident memory grow by more than maxBytes; it logs
// what it cost.
func Bounded(tb testing.TB, d time.Duration, maxBytes uint64, fn func()) {
	tb.Helper()
	u := Measure(fn)
	tb.Logf("took %s, heap peak +%d MiB, resident peak +%d MiB", u.Took.Round(time.Millisecond), u.Heap>>20, u.RSS>>20)
	if u.Took > d {
		tb.Errorf("took %s, over the %s it may take", u.Took, d)
	}
	if u.Heap > maxBytes || u.RSS > maxBytes {
		tb.Errorf("memory grew by %d MiB (heap) and %d MiB (resident), over the %d MiB it may", u.Heap>>20, u.RSS>>20, maxBytes>>20)
	}
}
