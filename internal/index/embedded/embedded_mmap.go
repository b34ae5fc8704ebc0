package embedded

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/mmapfile"
)

// fileMapping is the read-only mapping of a loaded file that a store's
// columns view; viewed counts the bytes they view.
type fileMapping struct {
	data    []byte
	viewed  int64
	cleanup runtime.Cleanup
}

// attachMapping makes e the owner of mapping data: Close or the first
// write releases it, and so does the garbage collector if e becomes
// unreachable without either (no search can be running then, since a
// search keeps its store reachable).
func (e *Store) attachMapping(data []byte, viewed int64) {
	m := &fileMapping{data: data, viewed: viewed}
	m.cleanup = runtime.AddCleanup(e, func(b []byte) { _ = mmapfile.Unmap(b) }, data)
	e.mapping = m
}

// release unmaps the file; the collector's cleanup is cancelled first so
// that it can never unmap the same range twice.
func (m *fileMapping) release() error {
	m.cleanup.Stop()
	return mmapfile.Unmap(m.data)
}

// Close releases the store: a store loaded from a mapped file unmaps it.
// Close takes the write lock, so it waits for every search in flight, and
// every later call fails with ErrClosed (Postings returns 0, Stats the zero
// value), so no search can ever read an unmapped page. Closing twice is a
// no-op.
func (e *Store) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	m := e.mapping
	e.mapping, e.graph = nil, nil
	e.recs, e.sparse, e.dense = recordTable{}, invertedIndex{}, flatIndex{}
	if m == nil {
		return nil
	}
	if err := m.release(); err != nil {
		return fmt.Errorf("close embedded store: %w", err)
	}
	return nil
}

// checkOpen returns ErrClosed after Close; callers hold the lock.
func (e *Store) checkOpen() error {
	if e.closed {
		return index.ErrClosed
	}
	return nil
}

// Mapped reports whether the store serves from a mapped file: true from
// Load on Linux until the first write or Close.
func (e *Store) Mapped() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.mapping != nil
}

// ownMemory copies every column that views the mapping onto the heap and
// releases the mapping, so that a write can change them; without a mapping
// it does nothing. Callers hold the write lock, so no search sees the
// switch.
func (e *Store) ownMemory() error {
	m := e.mapping
	if m == nil {
		return nil
	}
	r := &e.recs
	r.ids.ends, r.ids.arena = slices.Clone(r.ids.ends), slices.Clone(r.ids.arena)
	r.syms.ends, r.syms.arena = slices.Clone(r.syms.ends), slices.Clone(r.syms.arena)
	r.parent, r.doc, r.ordinal = slices.Clone(r.parent), slices.Clone(r.doc), slices.Clone(r.ordinal)
	x := &e.sparse
	x.keys = slices.Clone(x.keys)
	x.lists = packed(x.lists)
	x.blockMax = packed(x.blockMax)
	e.dense.owner, e.dense.data = slices.Clone(e.dense.owner), slices.Clone(e.dense.data)
	e.mapping = nil
	if err := m.release(); err != nil {
		return fmt.Errorf("releasing the mapped file: %w", err)
	}
	return nil
}

// packed copies lists into one heap allocation, each list's capacity ending
// with it, as compaction lays them out.
func packed[T any](lists [][]T) [][]T {
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	all := make([]T, 0, total)
	out := make([][]T, len(lists))
	for i, l := range lists {
		start := len(all)
		all = append(all, l...)
		out[i] = all[start:len(all):len(all)]
	}
	return out
}

// mappedBytes is how many bytes of the store's columns live in the mapping
// rather than on the heap.
func (e *Store) mappedBytes() int64 {
	if e.mapping == nil {
		return 0
	}
	return e.mapping.viewed
}

// writable prepares the store for a write: it fails with ErrClosed after
// Close and moves a mapped store onto the heap. Callers hold the write lock.
func (e *Store) writable() error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	return e.ownMemory()
}
