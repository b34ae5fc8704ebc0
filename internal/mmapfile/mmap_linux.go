//go:build linux

package mmapfile

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Map maps the first size bytes of f read-only and shared. The mapping is
// populated up front (read ahead and mapped in one call rather than
// faulted in page by page), since every caller verifies every page anyway.
// The mapping outlives f; Unmap releases it.
func Map(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("cannot map a file of %d bytes", size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	return b, nil
}

// Unmap releases a mapping made by Map; no slice into it may be used
// afterwards.
func Unmap(b []byte) error {
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("munmap: %w", err)
	}
	return nil
}
