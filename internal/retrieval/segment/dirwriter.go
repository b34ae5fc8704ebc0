package segment

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parentrag/parentrag/internal/retrieval/filesum"
)

// FileExt ends the name of every segment file.
const FileExt = ".seg"

// DirWriter writes a revision's segments into one directory, each named
// by its bytes' SHA-256, so the same segment always has the same name,
// and keeps each file's size and checksum for a manifest.
type DirWriter struct {
	dir   string
	names []string
	sums  map[string]filesum.Sum
}

// NewDirWriter makes dir and returns a writer into it.
func NewDirWriter(dir string) (*DirWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("segment directory: %w", err)
	}
	return &DirWriter{dir: dir, sums: map[string]filesum.Sum{}}, nil
}

// Add writes data, a segment's bytes (Writer.Bytes), durably into the
// directory as the next segment.
func (w *DirWriter) Add(data []byte) error {
	digest := sha256.Sum256(data)
	sum := filesum.Sum{Size: int64(len(data)), SHA256: hex.EncodeToString(digest[:])}
	name := sum.SHA256[:32] + FileExt
	if _, written := w.sums[name]; !written {
		if err := writeDurably(filepath.Join(w.dir, name), data); err != nil {
			return err
		}
		w.sums[name] = sum
	}
	w.names = append(w.names, name)
	return nil
}

// Names returns the names of the segments added, in order.
func (w *DirWriter) Names() []string { return w.names }

// Written returns each file's size and SHA-256, by name.
func (w *DirWriter) Written() map[string]filesum.Sum { return w.sums }

// writeDurably writes data to path and syncs it.
func writeDurably(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing segment: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing segment %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing segment %s: %w", path, err)
	}
	return f.Close()
}
