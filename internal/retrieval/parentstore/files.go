package parentstore

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parentrag/parentrag/internal/directfile"
	"github.com/parentrag/parentrag/internal/filesum"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// File names of a files store inside its directory.
const (
	DataFile  = "parents.jsonl"
	IndexFile = "parents.idx"
)

// indexMagic opens every index file; the last byte is the format version.
var indexMagic = [8]byte{'P', 'R', 'A', 'G', 'P', 'I', 'X', 1}

// location is where one parent's JSON line lies in the data file (of
// pack pack, in a store of several).
type location struct {
	offset int64
	length uint32
	pack   uint32
}

// FileWriter writes parents to a directory once. Nothing is visible under
// the final names until Close succeeds.
type FileWriter struct {
	dir     string
	data    *directfile.Writer
	hashed  *filesum.Writer // onto data
	offset  int64
	index   []indexEntry
	line    []byte                 // Add's scratch: one parent's line
	written map[string]filesum.Sum // by file name, set by Close
}

type indexEntry struct {
	id  string
	loc location
}

// NewFileWriter starts writing a files store into dir, which must exist.
func NewFileWriter(dir string) (*FileWriter, error) {
	f, err := directfile.CreateTemp(dir, DataFile+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("creating parent data file: %w", err)
	}
	return &FileWriter{dir: dir, data: f, hashed: filesum.NewWriter(f)}, nil
}

// Add appends one parent.
func (w *FileWriter) Add(p hierarchy.Parent) error {
	w.line = append(appendParentJSON(w.line[:0], &p), '\n')
	if _, err := w.hashed.Write(w.line); err != nil {
		return fmt.Errorf("writing parent %s: %w", p.ID, err)
	}
	w.index = append(w.index, indexEntry{id: p.ID, loc: location{offset: w.offset, length: uint32(len(w.line) - 1)}})
	w.offset += int64(len(w.line))
	return nil
}

// Close flushes and syncs the data, writes the index and moves both to
// their final names. After an error nothing is left under the final names.
func (w *FileWriter) Close() error {
	err := w.data.Close()
	var index filesum.Sum
	if err == nil {
		index, err = w.writeIndex()
	}
	if err == nil {
		err = os.Rename(w.data.Name(), filepath.Join(w.dir, DataFile))
	}
	if err != nil {
		os.Remove(w.data.Name())
		return fmt.Errorf("writing parent store: %w", err)
	}
	w.written = map[string]filesum.Sum{DataFile: w.hashed.Sum(), IndexFile: index}
	return nil
}

// Written is the size and SHA-256 of each file a successful Close wrote,
// by file name (DataFile, IndexFile), and nil before one, so that a
// bundle can list their checksums without reading them back.
func (w *FileWriter) Written() map[string]filesum.Sum { return w.written }

// Abort closes and removes what the writer wrote, for a build that fails
// before Close; after Close it does nothing.
func (w *FileWriter) Abort() {
	w.data.Abort()
}

// writeIndex writes the id -> location table: magic, count, then for each
// parent its id length, id, offset and length, little-endian. It returns
// the file's size and SHA-256.
func (w *FileWriter) writeIndex() (filesum.Sum, error) {
	return filesum.WriteFile(filepath.Join(w.dir, IndexFile), func(out io.Writer) error {
		out.Write(indexMagic[:]) // a write error is the buffer's, returned by WriteFile
		binary.Write(out, binary.LittleEndian, uint64(len(w.index)))
		for _, e := range w.index {
			binary.Write(out, binary.LittleEndian, uint16(len(e.id)))
			io.WriteString(out, e.id)
			binary.Write(out, binary.LittleEndian, e.loc.offset)
			binary.Write(out, binary.LittleEndian, e.loc.length)
		}
		return nil
	})
}

// Files reads a files store, or several read as one (OpenPacks). Only the
// id -> offset table is held in memory; each Get reads its parents from
// disk. Safe for concurrent use.
type Files struct {
	data  []*os.File // by pack
	index map[string]location
}

// OpenFiles opens the files store in dir.
func OpenFiles(dir string) (*Files, error) {
	return OpenPacks([]string{dir})
}

// OpenPacks opens the files stores in dirs as one store: each a pack of
// parents that FileWriter wrote. A parent id in two packs is refused.
func OpenPacks(dirs []string) (*Files, error) {
	f := &Files{index: map[string]location{}}
	for i, dir := range dirs {
		if err := readIndex(filepath.Join(dir, IndexFile), uint32(i), f.index); err != nil {
			f.Close()
			return nil, err
		}
		data, err := os.Open(filepath.Join(dir, DataFile))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("opening parent data: %w", err)
		}
		f.data = append(f.data, data)
	}
	return f, nil
}

// readIndex adds the id -> location table of pack to index, refusing
// files that are not an index of this format or are truncated, and an id
// index already holds.
func readIndex(path string, pack uint32, index map[string]location) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening parent index: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var magic [8]byte
	var n uint64
	if _, err := io.ReadFull(r, magic[:]); err != nil || magic != indexMagic {
		return fmt.Errorf("%s is not a parent index of this version", path)
	}
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return fmt.Errorf("reading parent index %s: %w", path, err)
	}
	for i := uint64(0); i < n; i++ {
		id, loc, err := readIndexEntry(r)
		if err != nil {
			return fmt.Errorf("reading parent index %s entry %d: %w", path, i, err)
		}
		if _, dup := index[id]; dup {
			return fmt.Errorf("parent index %s: parent %s is in another pack too", path, id)
		}
		loc.pack = pack
		index[id] = loc
	}
	return nil
}

// readIndexEntry reads one id and its location.
func readIndexEntry(r *bufio.Reader) (string, location, error) {
	var idLen uint16
	var loc location
	if err := binary.Read(r, binary.LittleEndian, &idLen); err != nil {
		return "", loc, err
	}
	id := make([]byte, idLen)
	if _, err := io.ReadFull(r, id); err != nil {
		return "", loc, err
	}
	if err := binary.Read(r, binary.LittleEndian, &loc.offset); err != nil {
		return "", loc, err
	}
	err := binary.Read(r, binary.LittleEndian, &loc.length)
	return string(id), loc, err
}

// Len returns the number of parents in the store.
func (f *Files) Len() int { return len(f.index) }

// IDs returns every parent id, in no particular order.
func (f *Files) IDs() []string {
	ids := make([]string, 0, len(f.index))
	for id := range f.index {
		ids = append(ids, id)
	}
	return ids
}

// Get implements Reader.
func (f *Files) Get(ctx context.Context, ids []string) ([]hierarchy.Parent, error) {
	out := make([]hierarchy.Parent, len(ids))
	for i, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		loc, ok := f.index[id]
		if !ok {
			return nil, fmt.Errorf("parent %s: %w", id, ErrNotFound)
		}
		buf := make([]byte, loc.length)
		if _, err := f.data[loc.pack].ReadAt(buf, loc.offset); err != nil {
			return nil, fmt.Errorf("reading parent %s: %w", id, err)
		}
		if err := json.Unmarshal(buf, &out[i]); err != nil {
			return nil, fmt.Errorf("decoding parent %s: %w", id, err)
		}
	}
	return out, nil
}

// Close releases the data files.
func (f *Files) Close() error {
	var errs []error
	for _, d := range f.data {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}
