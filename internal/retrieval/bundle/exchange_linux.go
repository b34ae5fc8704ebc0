//go:build linux

package bundle

import "golang.org/x/sys/unix"

// exchange atomically swaps the directory entries a and b
// (renameat2 with RENAME_EXCHANGE). It fails where the file system or the
// kernel does not support it; the caller then falls back to two renames.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
