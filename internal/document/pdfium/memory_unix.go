//go:build unix

package pdfium

import (
	"sync"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// mappedMemory backs an instance's linear memory with a private anonymous
// mapping of its maximum size, reserved but not committed: pages cost
// memory only once PDFium touches them, growing never copies, the memory
// is outside the Go heap (so it does not inflate the collector's goal) and
// is returned to the system once the instance is closed and no call runs
// in it (see releaseMemory).
type mappedMemory struct{ buf []byte }

// retired holds the mappings of closed instances until releaseMemory
// unmaps them. An instance stopped at its deadline is closed from another
// goroutine while its last call may still run for a moment: unmapping its
// memory then would crash the process.
var retired struct {
	sync.Mutex
	bufs [][]byte
}

// memoryAllocator reserves each instance's memory as a mapping.
var memoryAllocator experimental.MemoryAllocator = experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
	buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
	if err != nil {
		return &mappedMemory{} // every growth fails: PDFium reports it is out of memory
	}
	return &mappedMemory{buf: buf}
})

// Reallocate gives the first size bytes of the mapping, or nil past it.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size:size]
}

// Free retires the memory, to be unmapped by releaseMemory.
func (m *mappedMemory) Free() {
	if m.buf == nil {
		return
	}
	retired.Lock()
	retired.bufs = append(retired.bufs, m.buf)
	retired.Unlock()
	m.buf = nil
}

// releaseMemory unmaps the memory of the instances closed so far. It is
// called when no instance runs: after a read has returned.
func releaseMemory() {
	retired.Lock()
	defer retired.Unlock()
	for _, b := range retired.bufs {
		syscall.Munmap(b)
	}
	retired.bufs = nil
}
