package embedded

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/parentrag/parentrag/internal/directfile"
	"github.com/parentrag/parentrag/internal/filesum"
)

// File is the name of the file Save writes inside its directory.
const File = "vectors.prgv"

// Save writes the live records, their vectors and the store options to
// dir/File (creating dir if needed) in the checksummed binary format
// Load reads. The file is written to a temporary file in dir,
// fsynced and renamed over the old one, and the directory is fsynced, so a
// crash leaves either the old or the new file, never a torn one. Save takes
// the read lock: searches continue, writers wait. The HNSW graph is not
// saved; Load rebuilds it.
func (e *Store) Save(dir string) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if err := e.checkOpen(); err != nil {
		return fmt.Errorf("save embedded store: %w", err)
	}
	if _, err := replaceFile(dir, e.writeFile); err != nil {
		return fmt.Errorf("save embedded store: %w", err)
	}
	return nil
}

// replaceFile creates dir if needed and has write fill a temporary file in
// it (past the page cache where the file system allows, see directfile),
// which is fsynced and renamed over dir/File before dir itself
// is fsynced, so a crash leaves either the old or the new file, never a
// torn one. On failure the temporary file is removed. It returns the size
// and SHA-256 of what write wrote.
func replaceFile(dir string, write func(io.Writer) error) (sum filesum.Sum, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return sum, err
	}
	tmp, err := directfile.CreateTemp(dir, ".vectors-*.tmp")
	if err != nil {
		return sum, err
	}
	defer func() {
		if err != nil {
			tmp.Abort()
		}
	}()
	hashed := filesum.NewWriter(tmp)
	if err := write(hashed); err != nil {
		return sum, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return sum, fmt.Errorf("fsync and close: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, File)); err != nil {
		return sum, err
	}
	if err := syncDir(dir); err != nil {
		return sum, fmt.Errorf("fsync dir: %w", err)
	}
	return hashed.Sum(), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// saveView is the live subset of the store that Save writes.
type saveView struct {
	remap    []uint32
	listLive []uint32
	symPad   int // bytes of the padding symbol, 0 for none
	hdr      fileHeader
}

func (e *Store) view() *saveView {
	remap, live := e.recs.remap()
	v := &saveView{remap: remap, listLive: make([]uint32, len(e.sparse.lists))}
	h := &v.hdr
	h.version = formatVersion
	h.opts = e.opts
	h.records = uint64(live)
	for s, n := range remap {
		if n != noSlot {
			h.idBytes += uint64(len(e.recs.ids.bytes(uint32(s))))
		}
	}
	v.symPad = h.setSymbols(&e.recs.syms)
	for li, list := range e.sparse.lists {
		for _, p := range list {
			if remap[p.slot] != noSlot {
				v.listLive[li]++
			}
		}
		if v.listLive[li] > 0 {
			h.terms++
			h.postings += uint64(v.listLive[li])
			h.blocks += uint64(blocksOf(int(v.listLive[li])))
		}
	}
	h.dims = uint64(e.dense.dims)
	for _, slot := range e.dense.owner {
		if remap[slot] != noSlot {
			h.rows++
		}
	}
	return v
}

func (e *Store) writeFile(f io.Writer) error {
	v := e.view()
	return writeFileBody(f, &v.hdr, func(w *binWriter) error {
		e.writeRecords(w, v)
		e.writeVectors(w, v)
		return nil
	})
}

// writeFileBody writes header h, the body that body writes and the
// trailer with the body's checksum, and checks the body has the size h
// implies.
func writeFileBody(f io.Writer, h *fileHeader, body func(w *binWriter) error) error {
	if _, err := f.Write(h.encode()); err != nil {
		return err
	}
	crc := crc32.New(castagnoli)
	w := newBinWriter(io.MultiWriter(f, crc))
	if err := body(w); err != nil {
		return err
	}
	w.flush()
	if w.err != nil {
		return w.err
	}
	if want, _ := h.bodySize(1 << 62); w.n != want {
		return fmt.Errorf("internal error: wrote %d body bytes, header implies %d", w.n, want)
	}
	trailer := binary.LittleEndian.AppendUint32(nil, crc.Sum32())
	_, err := f.Write(append(trailer, trailerMagic...))
	return err
}

func (e *Store) writeRecords(w *binWriter, v *saveView) {
	r := &e.recs
	live := func(fn func(s uint32)) {
		for s, n := range v.remap {
			if n != noSlot {
				fn(uint32(s))
			}
		}
	}
	end := uint32(0)
	live(func(s uint32) { end += uint32(len(r.ids.bytes(s))); w.u32(end) })
	live(func(s uint32) { w.raw(r.ids.bytes(s)) })
	writeSymbols(w, &r.syms, v.symPad)
	live(func(s uint32) { w.u32(r.parent[s]) })
	live(func(s uint32) { w.u32(r.doc[s]) })
	live(func(s uint32) { w.u32(uint32(r.ordinal[s])) })
}

func (e *Store) writeVectors(w *binWriter, v *saveView) {
	x := &e.sparse
	for li, n := range v.listLive {
		if n > 0 {
			w.u32(x.keys[li])
		}
	}
	for _, n := range v.listLive {
		if n > 0 {
			w.u32(n)
		}
	}
	for _, list := range x.lists {
		for _, p := range list {
			if s := v.remap[p.slot]; s != noSlot {
				w.u32(s)
				w.u32(math.Float32bits(p.weight))
			}
		}
	}
	for li, list := range x.lists {
		if v.listLive[li] > 0 {
			writeArray(w, liveBlockMaxima(list, v.remap))
		}
	}
	for _, slot := range e.dense.owner {
		if s := v.remap[slot]; s != noSlot {
			w.u32(s)
		}
	}
	for r, slot := range e.dense.owner {
		if v.remap[slot] != noSlot {
			writeArray(w, e.dense.row(uint32(r)))
		}
	}
}

// liveBlockMaxima returns the block maxima of list's live postings, the
// list as it is written.
func liveBlockMaxima(list []posting, remap []uint32) []float32 {
	var out []float32
	n := 0
	for _, p := range list {
		if remap[p.slot] != noSlot {
			n++
			out = appendBlockMax(out, n, p.weight)
		}
	}
	return out
}

// setSymbols sets h's symbol counts for table syms and returns the length
// of the padding symbol that aligns the sections after the symbol arena
// (0 for none), which h counts; see the format description.
func (h *fileHeader) setSymbols(syms *strTable) int {
	h.syms, h.symBytes = uint64(syms.len()), uint64(len(syms.arena))
	pad := alignPad(h.idBytes + h.symBytes)
	if pad > 0 {
		h.syms++
		h.symBytes += uint64(pad)
	}
	return pad
}

// writeSymbols writes the symbol offsets and arena of syms followed by a
// padding symbol of pad zero bytes when pad is positive.
func writeSymbols(w *binWriter, syms *strTable, pad int) {
	writeArray(w, syms.ends)
	if pad > 0 {
		w.u32(uint32(len(syms.arena) + pad))
	}
	w.raw(syms.arena)
	w.raw(make([]byte, pad))
}
