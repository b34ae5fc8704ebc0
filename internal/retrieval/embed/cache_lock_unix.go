//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package embed

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile opens (creating) path and takes an exclusive, non-blocking flock
// on it, held until the returned file is closed. flock excludes other open
// files, so a second FileCache in the same process is refused as well.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked; close the other one or use another directory", ErrCacheLocked, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}
