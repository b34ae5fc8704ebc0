package indexer

import (
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// UnitCache keeps the units of the last build of each scope (see
// unitScope) between builds, as one pack file per scope in a directory
// (see unitPack). A build reads the units of unchanged documents from its
// scope's pack and writes every unit it spills, reused or made, into the
// next pack: the spill between its passes is that pack (see unitSpill),
// so the cache costs a build neither a file per document nor an encoding
// of its own. A pack is written under a temporary name and renamed into
// place once whole, so concurrent builds of one scope each leave a whole
// pack and the last renamed wins. A pack is never trusted beyond its
// checksums: a damaged unit is a miss, made again, and a damaged footer
// makes every unit one.
type UnitCache struct {
	dir string
	// lock holds a shared flock on the cache's directory while the cache
	// is open, so that Prune can tell whether another build uses the
	// cache (nil where there is no flock).
	lock *os.File
}

// packFileExt ends the name of every pack; a pack being written has a
// name starting with packTempPrefix.
const (
	packFileExt    = ".pack"
	packTempPrefix = ".pack-"
)

// OpenUnitCache opens, creating it when missing, the unit cache in dir,
// marking it used by this build until Close.
func OpenUnitCache(dir string) (*UnitCache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("unit cache: %w", err)
	}
	lock, err := lockShared(dir)
	if err != nil {
		return nil, fmt.Errorf("unit cache: %w", err)
	}
	return &UnitCache{dir: dir, lock: lock}, nil
}

// Close marks the cache no longer used by this build.
func (c *UnitCache) Close() error {
	if c.lock == nil {
		return nil
	}
	return c.lock.Close()
}

// Dir returns the cache's directory.
func (c *UnitCache) Dir() string { return c.dir }

// packPath is where the pack of the units of scope lives.
func (c *UnitCache) packPath(scope []byte) string {
	return filepath.Join(c.dir, hex.EncodeToString(scope)+packFileExt)
}

// previous opens the pack of scope for a build to reuse, or returns nil
// when there is none or it is damaged: the build then makes every unit.
func (c *UnitCache) previous(scope []byte) *unitPack {
	p, err := openPack(c.packPath(scope))
	if err != nil {
		return nil
	}
	return p
}

// Prune removes the packs no build has written since before, the
// temporary files of builds interrupted before then, and whatever an
// earlier layout of the cache left (a file per unit, which no build reads
// any more), and returns how many files it removed. A build writes its
// scope's pack anew, so a pack's modification time is its last use; a
// running build holds its pack open, so pruning it is safe. When no other
// build has the cache open (its lock can be taken exclusively: the kernel
// drops the lock of a build that was killed), every temporary file is a
// dead build's, removed whatever its age. Call it once this build's own
// pack is written: the lock it holds may be given up.
func (c *UnitCache) Prune(before time.Time) (int, error) {
	alone := c.lock != nil && lockExclusiveNow(c.lock)
	removed := 0
	err := filepath.WalkDir(c.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !isLegacyUnitFile(path, d) && !c.stale(path, d, before) && !(alone && c.isTemp(path, d)) {
			return nil
		}
		if os.Remove(path) == nil {
			removed++
		}
		return nil
	})
	removeLegacyDirs(c.dir)
	if err != nil {
		return removed, fmt.Errorf("pruning unit cache: %w", err)
	}
	return removed, nil
}

// stale reports whether the file at path is a pack or a pack being
// written last modified before before.
func (c *UnitCache) stale(path string, d fs.DirEntry, before time.Time) bool {
	if filepath.Dir(path) != c.dir || !(strings.HasSuffix(d.Name(), packFileExt) || strings.HasPrefix(d.Name(), packTempPrefix)) {
		return false
	}
	info, err := d.Info()
	return err == nil && info.ModTime().Before(before)
}

// isTemp reports whether the file at path is a pack being written.
func (c *UnitCache) isTemp(path string, d fs.DirEntry) bool {
	return filepath.Dir(path) == c.dir && strings.HasPrefix(d.Name(), packTempPrefix)
}

// isLegacyUnitFile reports whether path is a file of the cache's earlier
// layout: a unit file, or one being written, in a subdirectory named by a
// byte.
func isLegacyUnitFile(path string, d fs.DirEntry) bool {
	name := d.Name()
	return isByteDir(filepath.Base(filepath.Dir(path))) && (strings.HasSuffix(name, ".unit") || strings.HasPrefix(name, ".tmp-"))
}

// removeLegacyDirs removes the empty subdirectories the cache's earlier
// layout named by a byte.
func removeLegacyDirs(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() && isByteDir(e.Name()) {
			_ = os.Remove(filepath.Join(dir, e.Name())) // fails, harmlessly, when not empty
		}
	}
}

// isByteDir reports whether name is two lower-case hex digits.
func isByteDir(name string) bool {
	b, err := hex.DecodeString(name)
	return err == nil && len(b) == 1 && name == strings.ToLower(name)
}

// castagnoli is the CRC-32C table: the checksum catches truncation and
// corruption at memory speed.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)
