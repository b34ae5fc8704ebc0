package remote

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// ErrMemoryBusy is wrapped by the error of a read that found the Memory it
// shares taken by other reads and by results still in use: it fits alone,
// and may be tried again once they are released.
var ErrMemoryBusy = errors.New("memory for remote documents busy")

// Memory bounds the bytes of document text held at once by the reads of
// remote sources that share it (Spec.Memory), counted as they are read:
// the documents of reads under way, of results not yet released, and of
// those a Fetcher's cache keeps. A read that would pass the limit first
// makes the caches drop what they keep and no one uses; if it still does
// not fit, it fails, with ErrMemoryBusy when it would fit alone, else as
// over a limit (ErrLimit). A lean read counts one file at a time. It is
// safe for concurrent use.
type Memory struct {
	limit int64
	mu    sync.Mutex
	used  int64
	// idle are the holds a cache alone keeps, oldest first: what a read
	// that needs room makes the caches drop.
	idle []*Hold
}

// NewMemory returns a Memory of limit bytes.
func NewMemory(limit int64) *Memory { return &Memory{limit: limit} }

// Used is how many bytes are held now.
func (m *Memory) Used() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// Hold is what one read's documents take of a Memory: counted as the read
// reads them, given back once no one uses them and no cache keeps them. A
// nil Hold (a read without a Memory) counts nothing.
type Hold struct {
	m     *Memory
	bytes int64
	// users counts the read under way and the results handed out and not
	// released.
	users int
	// drop makes the cache that keeps the documents drop them; nil while
	// none does.
	drop func()
}

// newHold starts the hold of a read of m (nil for none), used by the read.
func newHold(m *Memory) *Hold {
	if m == nil {
		return nil
	}
	return &Hold{m: m, users: 1}
}

// take counts n more bytes, making room by dropping what caches alone
// keep, oldest first; it fails when they still do not fit.
func (h *Hold) take(n int64) error {
	if h == nil {
		return nil
	}
	m := h.m
	for {
		m.mu.Lock()
		if m.used+n <= m.limit {
			m.used += n
			h.bytes += n
			m.mu.Unlock()
			return nil
		}
		if len(m.idle) == 0 {
			alone := h.bytes + n
			m.mu.Unlock()
			return m.refusal(alone)
		}
		victim := m.idle[0]
		m.idle = m.idle[1:]
		m.used -= victim.bytes
		victim.bytes = 0
		drop := victim.drop
		victim.drop = nil
		m.mu.Unlock()
		// Outside m.mu: the cache takes its own lock to drop.
		drop()
	}
}

// refusal is the error of a read that needs alone bytes and finds no room.
func (m *Memory) refusal(alone int64) error {
	if alone <= m.limit {
		return fmt.Errorf("%w: other sources hold the %s of remote documents the operator keeps in memory; retried", ErrMemoryBusy, mebibytes(m.limit))
	}
	return fmt.Errorf("%w: its documents are over the %s of remote documents the operator keeps in memory (--remote-memory); index it in a Job (indexing.mode Job)", ErrLimit, mebibytes(m.limit))
}

// mebibytes writes n bytes in MiB.
func mebibytes(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// give gives back n bytes the read no longer holds.
func (h *Hold) give(n int64) {
	if h == nil {
		return
	}
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	h.bytes -= n
	h.m.used -= n
}

// retain counts one more user, for a result a cache hands out again, and
// reports whether it could: false once the documents were dropped to make
// room, when the cache must read them again.
func (h *Hold) retain() bool {
	if h == nil {
		return true
	}
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if h.users == 0 && h.drop == nil {
		return false
	}
	h.users++
	h.m.idle = slices.DeleteFunc(h.m.idle, func(x *Hold) bool { return x == h })
	return true
}

// Release ends one use. Once none is left the bytes are given back,
// unless a cache keeps the documents: they may then be dropped to make
// room.
func (h *Hold) Release() {
	if h == nil {
		return
	}
	m := h.m
	m.mu.Lock()
	defer m.mu.Unlock()
	h.users--

	if h.users > 0 {
		return
	}
	if h.drop != nil {
		m.idle = append(m.idle, h)
		return
	}
	m.used -= h.bytes
	h.bytes = 0
}

// keep records that a cache keeps the documents, and how to make it drop
// them.
func (h *Hold) keep(drop func()) {
	if h == nil {
		return
	}
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	h.drop = drop
	if h.users == 0 {
		h.m.idle = append(h.m.idle, h)
	}
}

// unkeep records that the cache no longer keeps the documents (it replaced
// or forgot them); with no user left, the bytes are given back.
func (h *Hold) unkeep() {
	if h == nil {
		return
	}
	m := h.m
	m.mu.Lock()
	defer m.mu.Unlock()
	h.drop = nil
	m.idle = slices.DeleteFunc(m.idle, func(x *Hold) bool { return x == h })
	if h.users == 0 {
		m.used -= h.bytes
		h.bytes = 0
	}
}

// KeepIn records that a cache keeps res's documents, with how to make it
// forget them: drop, called when a read of the Memory needs the room and
// no one uses them (it must not wait on a fetch). The cache calls Unkeep
// when it replaces or forgets them, and hands them out with Reuse.
func (r Result) KeepIn(drop func()) { r.hold.keep(drop) }

// Unkeep records that the cache no longer keeps res's documents.
func (r Result) Unkeep() { r.hold.unkeep() }

// Reuse returns res, kept by a cache, for one more use (to be released),
// marked as cached; false when the Memory made the cache drop it.
func (r Result) Reuse() (Result, bool) {
	if !r.hold.retain() {
		return Result{}, false
	}
	res := copyResult(r)
	res.Cached = true
	return res, true
}

// SameRead reports whether r and other come from the same read.
func (r Result) SameRead(other Result) bool {
	return r.hold == other.hold && r.Version == other.Version
}

// counted returns r, counting against h each byte read from it.
func (h *Hold) counted(r io.Reader) io.Reader {
	if h == nil {
		return r
	}
	return &heldReader{r: r, h: h}
}

// heldReader counts what it reads against a Hold.
type heldReader struct {
	r io.Reader
	h *Hold
}

func (r *heldReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		if terr := r.h.take(int64(n)); terr != nil {
			return 0, terr
		}
	}
	return n, err
}
