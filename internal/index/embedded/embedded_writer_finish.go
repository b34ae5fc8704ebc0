package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parentrag/parentrag/internal/filesum"
	"github.com/parentrag/parentrag/internal/index"
)

// column is one section of the file being written, streamed to a
// temporary file.
type column struct {
	f *os.File
	w *binWriter
}

func openColumn(dir, name string) (*column, error) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	return &column{f: f, w: newBinWriter(f)}, nil
}

// copyTo flushes the column and appends its whole content to out.
func (c *column) copyTo(out *binWriter) error {
	c.w.flush()
	if c.w.err != nil {
		return c.w.err
	}
	if _, err := c.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	buf := make([]byte, ioChunk)
	for {
		n, err := c.f.Read(buf)
		out.raw(buf[:n])
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// writerColumns are the streamed sections, in file order.
type writerColumns struct {
	idEnds, idArena, parent, doc, ordinal, blockMax, owner, dense *column
}

func (c *writerColumns) all() []**column {
	return []**column{&c.idEnds, &c.idArena, &c.parent, &c.doc, &c.ordinal, &c.blockMax, &c.owner, &c.dense}
}

func (c *writerColumns) open(dir string) error {
	for i, col := range c.all() {
		var err error
		if *col, err = openColumn(dir, fmt.Sprintf("column-%d", i)); err != nil {
			return errors.Join(err, c.close())
		}
	}
	return nil
}

// err returns the first write error of any column.
func (c *writerColumns) err() error {
	for _, col := range c.all() {
		if *col != nil && (*col).w.err != nil {
			return (*col).w.err
		}
	}
	return nil
}

func (c *writerColumns) close() error {
	var errs []error
	for _, col := range c.all() {
		if *col != nil {
			errs = append(errs, (*col).f.Close())
			*col = nil
		}
	}
	return errors.Join(errs...)
}

// Finish checks that the writer holds exactly want records with distinct
// ids, then writes dir/File as Save does (temporary file, fsync,
// rename, directory fsync) and removes the temporary files. On a count
// mismatch nothing is written and the writer stays open; any other failure
// leaves the old file, if any, in place and the writer broken. Finish
// takes time linear in the postings (a merge of the runs of postings and
// of the sorted runs of id hashes).
func (w *FileWriter) Finish(ctx context.Context, want int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != nil {
		return fmt.Errorf("finish vector file: %w", w.state)
	}
	if w.records != want {
		return fmt.Errorf("finish vector file: it holds %d records, want %d: %w", w.records, want, index.ErrInvalidInput)
	}
	err := w.checkDistinctIDs(ctx)
	if err == nil {
		w.written, err = replaceFile(w.dir, func(f io.Writer) error { return w.writeFile(ctx, f) })
	}
	if err != nil {
		w.state = fmt.Errorf("an earlier Finish failed: %w", err)
		return errors.Join(fmt.Errorf("finish vector file: %w", err), w.cleanUp())
	}
	w.state = errors.New("the file writer is finished")
	return w.cleanUp()
}

// Written is the size and SHA-256 of the file a successful Finish wrote,
// and false before one, so that a bundle can list the file's checksum
// without reading it back.
func (w *FileWriter) Written() (filesum.Sum, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written, w.written.SHA256 != ""
}

// header is the header of the file the writer writes, with the padding
// symbol it needs.
func (w *FileWriter) header() (*fileHeader, int) {
	h := &fileHeader{version: formatVersion, opts: w.opts}
	h.records, h.idBytes = uint64(w.records), w.idBytes
	pad := h.setSymbols(&w.syms)
	h.terms, h.postings = uint64(len(w.keys)), w.total
	h.dims, h.rows = uint64(w.dims), w.rows
	h.blocks = totalBlocks(w.counts)
	return h, pad
}

// writeFile writes the header, every section in file order and the trailer
// to f.
func (w *FileWriter) writeFile(ctx context.Context, f io.Writer) error {
	h, pad := w.header()
	return writeFileBody(f, h, func(out *binWriter) error {
		c := &w.cols
		err := errors.Join(c.idEnds.copyTo(out), c.idArena.copyTo(out))
		writeSymbols(out, &w.syms, pad)
		err = errors.Join(err, c.parent.copyTo(out), c.doc.copyTo(out), c.ordinal.copyTo(out))
		if err != nil {
			return err
		}
		writeArray(out, w.keys)
		writeArray(out, w.counts)
		if err := w.mergePostings(ctx, out); err != nil {
			return err
		}
		return errors.Join(c.blockMax.copyTo(out), c.owner.copyTo(out), c.dense.copyTo(out))
	})
}

// mergePostings writes every posting grouped by term in term-table order,
// each list in slot order, and streams each list's block maxima to their
// column.
func (w *FileWriter) mergePostings(ctx context.Context, out *binWriter) error {
	err := w.posts.each(ctx, out, len(w.keys), func(maxima []float32) {
		writeArray(w.cols.blockMax.w, maxima)
	})
	return errors.Join(err, w.cols.blockMax.w.err)
}

// checkDistinctIDs merges the id hashes and compares the ids of any two
// records whose hashes collide, failing on the first repeated id.
func (w *FileWriter) checkDistinctIDs(ctx context.Context) error {
	c := &w.cols
	for _, col := range []*column{c.idEnds, c.idArena} {
		if col.w.flush(); col.w.err != nil {
			return col.w.err
		}
	}
	var prev triple
	first := true
	return w.ids.each(ctx, func(t triple) error {
		same := !first && t[0] == prev[0] && t[1] == prev[1]
		first = false
		if same {
			a, errA := w.idAt(prev[2])
			b, errB := w.idAt(t[2])
			if err := errors.Join(errA, errB); err != nil {
				return err
			}
			if bytes.Equal(a, b) {
				return fmt.Errorf("records %d and %d have the same id %q: %w", prev[2], t[2], a, index.ErrInvalidInput)
			}
		}
		prev = t
		return nil
	})
}

// idAt reads the id of slot s back from the flushed id columns.
func (w *FileWriter) idAt(s uint32) ([]byte, error) {
	var b [8]byte
	start, end := uint32(0), uint32(0)
	if s == 0 {
		if _, err := w.cols.idEnds.f.ReadAt(b[:4], 0); err != nil {
			return nil, err
		}
		end = binary.LittleEndian.Uint32(b[:])
	} else {
		if _, err := w.cols.idEnds.f.ReadAt(b[:], 4*int64(s-1)); err != nil {
			return nil, err
		}
		start, end = binary.LittleEndian.Uint32(b[:]), binary.LittleEndian.Uint32(b[4:])
	}
	id := make([]byte, end-start)
	_, err := w.cols.idArena.f.ReadAt(id, int64(start))
	return id, err
}
