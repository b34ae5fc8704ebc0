package directfile

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Align is the alignment direct writes keep: of the memory written from,
// of the file offset and of the length (the largest logical block size of
// common devices).
const Align = 4096

// bufferSize is the size of a Writer's buffer, a multiple of Align.
const bufferSize = 1 << 20

// buffers keeps the buffers of closed Writers for the next ones, so that
// a build writing many files allocates few.
var buffers = sync.Pool{New: func() any {
	b := alignedBuffer(bufferSize)
	return &b
}}

// Writer writes a new file sequentially. Bytes wait in an aligned buffer
// until a whole buffer can be written; a Write of aligned memory while
// nothing waits goes to the file without being copied. Close writes what
// waits, ordinarily for its unaligned tail, then syncs and closes the
// file.
type Writer struct {
	f      *os.File
	buf    []byte  // aligned to Align; its length is what waits
	pooled *[]byte // buf's memory, from buffers; nil once given back
	direct bool    // writes bypass the page cache
}

// CreateTemp creates a new file in dir, named as os.CreateTemp names it
// from pattern, and returns a Writer onto it.
func CreateTemp(dir, pattern string) (*Writer, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	buf := buffers.Get().(*[]byte)
	return &Writer{f: f, buf: (*buf)[:0], pooled: buf, direct: setDirect(f, true) == nil}, nil
}

// Name is the file's name, as os.File.Name gives it.
func (w *Writer) Name() string { return w.f.Name() }

// Direct reports whether the writer's writes bypass the page cache.
func (w *Writer) Direct() bool { return w.direct }

// Write appends p to the file. It returns len(p) and nil, or the bytes it
// took before an error and the error; after an error the file is not
// whole and its writer should be aborted.
func (w *Writer) Write(p []byte) (int, error) {
	taken := 0
	for len(p) > 0 {
		if len(w.buf) == 0 && w.direct && len(p) >= Align && isAligned(p) {
			whole := len(p) &^ (Align - 1)
			if err := w.writeOut(p[:whole]); err != nil {
				return taken, err
			}
			taken, p = taken+whole, p[whole:]
			continue
		}
		n := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+n]
		taken, p = taken+n, p[n:]
		if len(w.buf) == cap(w.buf) {
			if err := w.writeOut(w.buf); err != nil {
				return taken, err
			}
			w.buf = w.buf[:0]
		}
	}
	return taken, nil
}

// Close writes what waits in the buffer, syncs the file and closes it.
// Writes after Close fail.
func (w *Writer) Close() error {
	err := w.flush()
	w.giveBack()
	return errors.Join(err, w.f.Sync(), w.f.Close())
}

// Abort discards the file, for a write that will not be kept: it closes
// the file if it is open and removes it under its temporary name (a file
// already renamed is left where it is).
func (w *Writer) Abort() {
	w.giveBack()
	w.f.Close()
	os.Remove(w.f.Name())
}

// giveBack returns the buffer to buffers, once.
func (w *Writer) giveBack() {
	if w.pooled != nil {
		buffers.Put(w.pooled)
		w.pooled, w.buf = nil, nil
	}
}

// flush writes the buffer: its aligned part as every write before it,
// then the rest, which only an ordinary write may end the file with.
func (w *Writer) flush() error {
	whole := len(w.buf) &^ (Align - 1)
	if err := w.writeOut(w.buf[:whole]); err != nil {
		return err
	}
	if whole < len(w.buf) {
		w.stopDirect()
		if err := w.writeOut(w.buf[whole:]); err != nil {
			return err
		}
	}
	w.buf = w.buf[:0]
	return nil
}

// writeOut writes b whole at the file's end. A direct write the file
// system refuses (EINVAL) turns direct writes off and is made again
// ordinarily.
func (w *Writer) writeOut(b []byte) error {
	n, err := w.f.Write(b)
	if err != nil && w.direct && errors.Is(err, syscall.EINVAL) {
		w.stopDirect()
		_, err = w.f.Write(b[n:])
	}
	return err
}

// stopDirect makes the writes that follow ordinary ones.
func (w *Writer) stopDirect() {
	if w.direct {
		setDirect(w.f, false)
		w.direct = false
	}
}

// alignedBuffer returns an empty slice of capacity n whose memory starts
// at a multiple of Align.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+Align)
	skip := (Align - int(uintptr(unsafe.Pointer(&b[0])))%Align) % Align
	return b[skip : skip : skip+n]
}

// isAligned reports whether p's memory starts at a multiple of Align.
func isAligned(p []byte) bool {
	return uintptr(unsafe.Pointer(unsafe.SliceData(p)))%Align == 0
}
