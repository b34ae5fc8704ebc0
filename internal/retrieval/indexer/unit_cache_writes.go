package indexer

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// unitWriters is how many goroutines write unit files, and unitQueue how
// many encoded units may wait for them: a build making units faster than
// the disk takes them waits, so the queue's memory stays bounded.
const (
	unitWriters = 2
	unitQueue   = 64
)

// unitWrite is one encoded unit and the file it goes to.
type unitWrite struct {
	path string
	data []byte
}

// unitWrites writes unit files from a small pool of goroutines, off the
// path of the build that made the units. A write that fails is counted and
// skipped: the cache is only an optimisation, and a unit missing from it
// is made again by the next build.
type unitWrites struct {
	start  sync.Once
	queue  chan unitWrite
	wg     sync.WaitGroup
	mu     sync.Mutex
	failed int
	first  error
}

// add queues data to be written to path, starting the writers on first
// use; it blocks while the queue is full.
func (w *unitWrites) add(path string, data []byte) {
	w.start.Do(func() {
		w.queue = make(chan unitWrite, unitQueue)
		for range unitWriters {
			w.wg.Go(func() {
				for u := range w.queue {
					w.note(writeUnitFile(u.path, u.data))
				}
			})
		}
	})
	w.queue <- unitWrite{path: path, data: data}
}

// note counts err, keeping the first one.
func (w *unitWrites) note(err error) {
	if err == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed++; w.first == nil {
		w.first = err
	}
}

// wait returns once every queued unit is written or has failed, with how
// many failed and the first failure, and readies w for another build. No
// add may run concurrently with wait.
func (w *unitWrites) wait() (int, error) {
	if w.queue != nil {
		close(w.queue)
		w.wg.Wait()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	failed, first := w.failed, w.first
	w.start, w.queue, w.failed, w.first = sync.Once{}, nil, 0, nil
	return failed, first
}

// writeUnitFile writes data to a temporary file beside path and renames it
// into place, so readers never see half a file.
func writeUnitFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("unit cache: %w", err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("unit cache: writing %s: %w", path, werr)
	}
	return nil
}
