package remote

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bombZip is a zip of n files of size bytes of text each, compressed about
// a hundredfold, as a small download that unpacks large.
func bombZip(t testing.TB, n, size int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := range n {
		w, err := zw.Create(fmt.Sprintf("docs/page-%03d.md", i))
		if err != nil {
			t.Fatal(err)
		}
		line := []byte(fmt.Sprintf("Page %d says the same thing again and again, as large pages do.\n", i))
		for written := 0; written < size; written += len(line) {
			w.Write(line[:min(len(line), size-written)])
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// heapPeak samples the bytes of live and unswept heap objects every
// millisecond until stop is called, which returns the largest sample.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// Two Corpora read zips of 9 MiB pages at once through the operator's
// fetchers, which share one Memory of 128 MiB: a zip of 10 pages (90 MiB
// of text) and one of 40 (360 MiB, 5 MB to download). The heap grows by
// no more than twice the budget and the pages read at once (the
// collector's goal with GOGC 100). Each read is retried while the other
// holds the budget, as the operator retries a reconcile: the small source
// is read whole; the large one fails, saying it is over the operator's
// memory for remote documents.
func TestConcurrentReadsStayWithinMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 450 MiB of pages and measures the heap; skipped with -short")
	}
	const page, budget = 9 << 20, 128 << 20
	small, large := bombZip(t, 10, page), bombZip(t, 40, page)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		if strings.Contains(r.URL.Path, "large") {
			w.Write(large)
			return
		}
		w.Write(small)
	}))
	defer srv.Close()
	mem := NewMemory(budget)
	fetcher := &Fetcher{}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	stop := heapPeak()
	var smallDocs int
	var smallErr, largeErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 100 {
			var res Result
			res, smallErr = fetcher.Fetch(context.Background(), "small", Spec{URL: srv.URL + "/small.zip", Memory: mem})
			smallDocs = len(res.Documents)
			// Used, as a build would, then released, as a reconcile's end does.
			res.Release()
			if !errors.Is(smallErr, ErrMemoryBusy) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	wg.Go(func() {
		for range 100 {
			var res Result
			res, largeErr = fetcher.Fetch(context.Background(), "large", Spec{URL: srv.URL + "/large.zip", Memory: mem})
			res.Release()
			if !errors.Is(largeErr, ErrMemoryBusy) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	wg.Wait()
	peak := stop()
	growth := int64(peak) - int64(base.HeapAlloc)
	bound := int64(2 * (budget + 2*3*page))
	t.Logf("heap grew by %d MiB at most (bound %d MiB); small: %d documents (%v); large: %v", growth>>20, bound>>20, smallDocs, smallErr, largeErr)
	if growth > bound {
		t.Errorf("the heap grew by %d MiB reading two sources at once, over the bound of %d MiB", growth>>20, bound>>20)
	}
	if smallErr != nil || smallDocs != 10 {
		t.Errorf("the source under the budget: %d documents (%v), want all 10", smallDocs, smallErr)
	}
	if !errors.Is(largeErr, ErrLimit) || !strings.Contains(fmt.Sprint(largeErr), "128 MiB of remote documents") {
		t.Errorf("the source over the budget: %v, want it refused for the memory it would take", largeErr)
	}
	// The cache may keep the small source's documents, unless the large
	// read made it drop them; forgotten, they are given back.
	if used := mem.Used(); used != 0 && used != 10*page {
		t.Errorf("%d bytes held once both reads are over, want none or the small source's %d, kept by the cache", used, 10*page)
	}
	fetcher.Forget(srv.URL + "/small.zip")
	if used := mem.Used(); used != 0 {
		t.Errorf("%d bytes held once the cache forgot the small source, want none", used)
	}
}

// A read that needs room makes the cache drop the documents no one uses;
// the next fetch of that source, within MinInterval, downloads it again
// rather than returning it empty. A lean read counts one file at a time
// and keeps nothing.
func TestMemoryDropsWhatTheCacheAloneKeeps(t *testing.T) {
	const page = 1 << 20
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/zip")
		w.Write(bombZip(t, 2, page))
	}))
	defer srv.Close()
	mem := NewMemory(3 * page)
	fetcher := &Fetcher{MinInterval: time.Hour}
	read := func(name string) Result {
		t.Helper()
		res, err := fetcher.Fetch(context.Background(), name, Spec{URL: srv.URL + "/" + name + ".zip", Memory: mem})
		if err != nil || len(res.Documents) != 2 {
			t.Fatalf("%s: %d documents (%v), want 2", name, len(res.Documents), err)
		}
		return res
	}
	a := read("a")
	if _, err := fetcher.Fetch(context.Background(), "b", Spec{URL: srv.URL + "/b.zip", Memory: mem}); !errors.Is(err, ErrMemoryBusy) {
		t.Fatalf("b while a's documents are in use: %v, want ErrMemoryBusy", err)
	}
	a.Release()
	read("b").Release()
	if again := read("a"); again.Cached || hits.Load() != 4 {
		t.Errorf("a after the cache dropped it: cached %v after %d downloads, want a fourth download", again.Cached, hits.Load())
	} else {
		again.Release()
	}
	lean := &Fetcher{Lean: true}
	res, err := lean.Fetch(context.Background(), "c", Spec{URL: srv.URL + "/c.zip", Memory: NewMemory(page + 1)})
	if err != nil || res.Count != 2 || res.Documents != nil {
		t.Errorf("a lean read of two pages within one page of memory: %d counted, %d kept (%v), want 2 and none", res.Count, len(res.Documents), err)
	}
}
