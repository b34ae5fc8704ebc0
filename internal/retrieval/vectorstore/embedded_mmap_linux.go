//go:build linux

package vectorstore

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f read-only and shared, so the
// pages are the page cache's own and cost the process no anonymous memory.
// The mapping is populated up front (read ahead and mapped in one call
// rather than faulted in page by page), since loading verifies every page
// anyway. The mapping outlives f; unmapFile releases it.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("cannot map a file of %d bytes", size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	return b, nil
}

// unmapFile releases a mapping made by mapFile; no slice into it may be
// used afterwards.
func unmapFile(b []byte) error {
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("munmap: %w", err)
	}
	return nil
}
