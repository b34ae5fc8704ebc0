//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cli

import (
	"io/fs"
	"path/filepath"
	"time"
)

// staleTempAge is, without flock, how long a temporary folder of an index
// must have gone unmodified before a later run removes it: a run touches
// its folder continuously while saving.
const staleTempAge = 10 * time.Minute

// lockOut cannot tell a live run from a dead one without flock: it removes
// the temporary folders of out untouched for staleTempAge.
func lockOut(out string) (unlock func(), err error) {
	now := time.Now()
	removeTemps(out, func(dir string) bool {
		newest, ok := newestModTime(dir)
		return ok && now.Sub(newest) >= staleTempAge
	})
	return func() {}, nil
}

// newestModTime is the latest modification time of dir and everything in
// it; ok is false when any of it cannot be read.
func newestModTime(dir string) (time.Time, bool) {
	var newest time.Time
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if t := info.ModTime(); t.After(newest) {
			newest = t
		}
		return nil
	})
	return newest, err == nil
}
