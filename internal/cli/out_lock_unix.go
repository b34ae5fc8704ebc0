//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockOut marks this run as writing out until the returned unlock is
// called, with a shared flock on out's lock file (see outLockPath), and
// first removes the
// temporary folders of runs that are gone. A run holds the lock from
// before its temporary folder exists until after it is renamed into place,
// and the kernel drops the lock of a killed process, so: when the lock can
// be taken exclusively, no live run is writing out and every temporary
// folder of out is a dead run's, removed at once; when it cannot, another
// run is live, and none is removed (a later run alone removes them).
func lockOut(out string) (unlock func(), err error) {
	path, err := outLockPath(out)
	if err != nil {
		return nil, fmt.Errorf("locking --out %s: %w", out, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking --out %s: %w", out, unwrapPathError(err))
	}
	fd := int(f.Fd())
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		removeTemps(out, func(string) bool { return true })
	}
	// Taking the shared lock converts an exclusive one, or waits while
	// another run removes temporary folders under its exclusive lock.
	if err := syscall.Flock(fd, syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// outLockPath is the lock file of out: named by a digest of out's absolute
// path in the user's cache directory (the system's temporary directory
// without one), so that nothing is left beside out. It is never removed:
// a lock file removed while another run waits for it would let a third
// run lock a new file and miss the second.
func outLockPath(out string) (string, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "parentrag", "out-locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock"), nil
}
