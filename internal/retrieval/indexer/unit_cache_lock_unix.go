//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package indexer

import (
	"fmt"
	"os"
	"syscall"
)

// lockShared opens the directory at path and holds a shared flock on it
// until it is closed, waiting while a Prune holds it exclusively. Locking
// the directory itself leaves no lock file in it.
func lockShared(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}

// lockExclusiveNow turns f's shared lock into an exclusive one and reports
// whether it could at once: whether no one else holds f's directory locked.
// Failing, the conversion may leave f without any lock.
func lockExclusiveNow(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
