package build

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// segmentCache keeps the segments and parent packs of earlier builds in
// the unit cache directory, under segments/<key>/: their files, linked
// (or copied) from the bundle that built them, and entry.json, their
// counts and checksums. An entry appears whole or not at all (it is
// renamed into place), and a build that uses it touches it. A nil cache
// holds nothing and keeps nothing.
type segmentCache struct{ dir string }

// entryFile holds a cached segment's bundle.SegmentEntry.
const entryFile = "entry.json"

// openSegmentCache returns the segment cache in the unit cache directory
// dir, nil for "".
func openSegmentCache(dir string) (*segmentCache, error) {
	if dir == "" {
		return nil, nil
	}
	c := &segmentCache{dir: filepath.Join(dir, bundle.SegmentsDir)}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("segment cache: %w", err)
	}
	return c, nil
}

// linkInto links the cached files of the segment of key into the bundle
// directory dir and returns its entry, or false when the cache does not
// hold it whole (dir is then left without any of its files).
func (c *segmentCache) linkInto(key, dir string) (bundle.SegmentEntry, bool) {
	if c == nil {
		return bundle.SegmentEntry{}, false
	}
	entryDir := filepath.Join(c.dir, key)
	data, err := os.ReadFile(filepath.Join(entryDir, entryFile))
	var entry bundle.SegmentEntry
	if err != nil || json.Unmarshal(data, &entry) != nil || entry.Key != key {
		return bundle.SegmentEntry{}, false
	}
	var linked []string
	for rel, sum := range entry.Files {
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		src := filepath.Join(entryDir, cachedName(rel))
		if info, err := os.Stat(src); err != nil || info.Size() != sum.Size || linkOrCopy(src, dst) != nil {
			for _, l := range linked {
				os.Remove(l)
			}
			return bundle.SegmentEntry{}, false
		}
		linked = append(linked, dst)
	}
	now := time.Now()
	_ = os.Chtimes(entryDir, now, now) // its last use, for prune
	return entry, true
}

// keep puts the files of entry, in the bundle directory dir, into the
// cache under its key.
func (c *segmentCache) keep(entry bundle.SegmentEntry, dir string) error {
	if c == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(c.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("segment cache: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	for rel := range entry.Files {
		if err := linkOrCopy(filepath.Join(dir, filepath.FromSlash(rel)), filepath.Join(tmp, cachedName(rel))); err != nil {
			return fmt.Errorf("segment cache: %w", err)
		}
	}
	data, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, entryFile), data, 0o644); err != nil {
		return fmt.Errorf("segment cache: %w", err)
	}
	final := filepath.Join(c.dir, entry.Key)
	os.RemoveAll(final) // an entry that did not link whole
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("segment cache: %w", err)
	}
	return nil
}

// prune removes the entries no build has used since before, and the
// temporary directories of builds that died.
func (c *segmentCache) prune(before time.Time) {
	entries, _ := os.ReadDir(c.dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() && info.ModTime().Before(before) {
			os.RemoveAll(filepath.Join(c.dir, e.Name()))
		}
	}
}

// cachedName is the name, in a cache entry, of the bundle file at rel:
// its base name (a segment's, or a parent pack's files).
func cachedName(rel string) string {
	name := filepath.Base(filepath.FromSlash(rel))
	if strings.HasSuffix(name, bundle.SegmentExt) {
		return "segment" + bundle.SegmentExt
	}
	return name
}

// linkOrCopy makes dst a hard link to src, or a copy where links cannot
// cross (another file system), creating dst's directory.
func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
