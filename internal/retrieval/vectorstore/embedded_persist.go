package vectorstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"math"
	"os"
	"path/filepath"
)

// EmbeddedFile is the name of the file Save writes inside its directory.
const EmbeddedFile = "vectors.prgv"

// Save writes the live records, their vectors and the store options to
// dir/EmbeddedFile (creating dir if needed) in the checksummed binary format
// LoadEmbedded reads. The file is written to a temporary file in dir,
// fsynced and renamed over the old one, and the directory is fsynced, so a
// crash leaves either the old or the new file, never a torn one. Save takes
// the read lock: searches continue, writers wait. The HNSW graph is not
// saved; LoadEmbedded rebuilds it.
func (e *Embedded) Save(dir string) (err error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save embedded store: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".vectors-*.tmp")
	if err != nil {
		return fmt.Errorf("save embedded store: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := e.writeFile(tmp); err != nil {
		return fmt.Errorf("save embedded store: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("save embedded store: fsync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save embedded store: close: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, EmbeddedFile)); err != nil {
		return fmt.Errorf("save embedded store: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("save embedded store: fsync dir: %w", err)
	}
	return nil
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
	hdr      fileHeader
}

func (e *Embedded) view() *saveView {
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
	h.syms, h.symBytes = uint64(e.recs.syms.len()), uint64(len(e.recs.syms.arena))
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

func (e *Embedded) writeFile(f *os.File) error {
	v := e.view()
	if _, err := f.Write(v.hdr.encode()); err != nil {
		return err
	}
	crc := crc32.New(castagnoli)
	w := newBinWriter(io.MultiWriter(f, crc))
	e.writeRecords(w, v)
	e.writeVectors(w, v)
	w.flush()
	if w.err != nil {
		return w.err
	}
	if want, _ := v.hdr.bodySize(1 << 62); w.n != want {
		return fmt.Errorf("internal error: wrote %d body bytes, header implies %d", w.n, want)
	}
	trailer := binary.LittleEndian.AppendUint32(nil, crc.Sum32())
	_, err := f.Write(append(trailer, trailerMagic...))
	return err
}

func (e *Embedded) writeRecords(w *binWriter, v *saveView) {
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
	writeArray(w, r.syms.ends)
	w.raw(r.syms.arena)
	live(func(s uint32) { w.u32(r.parent[s]) })
	live(func(s uint32) { w.u32(r.doc[s]) })
	live(func(s uint32) { w.u32(uint32(r.ordinal[s])) })
}

func (e *Embedded) writeVectors(w *binWriter, v *saveView) {
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

// LoadEmbedded reads a store written by Save from dir/EmbeddedFile. The
// header checksum, the file size implied by the header, the body checksum
// and every cross-reference are verified before the store is returned, so a
// truncated, extended or corrupted file fails with ErrCorruptFile instead of
// yielding wrong results. Options (metric, HNSW settings) come from the
// file; an HNSW graph is rebuilt when enabled and above its threshold, which
// costs time proportional to the dense data.
func LoadEmbedded(dir string) (*Embedded, error) {
	path := filepath.Join(dir, EmbeddedFile)
	e, err := loadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load embedded store %s: %w", path, err)
	}
	return e, nil
}

func loadFile(path string) (*Embedded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	h, err := readHeader(f, size)
	if err != nil {
		return nil, err
	}
	body, err := h.bodySize(size)
	if err != nil {
		return nil, err
	}
	if want := int64(h.size()) + body + trailerSize; want != size {
		return nil, fmt.Errorf("file is %d bytes but its header implies %d (truncated or extended): %w", size, want, ErrCorruptFile)
	}
	crc := crc32.New(castagnoli)
	r := newBinReader(io.TeeReader(io.LimitReader(f, body), crc))
	e := decodeBody(h, r)
	if r.err != nil {
		return nil, fmt.Errorf("read body: %w", r.err)
	}
	if err := checkTrailer(f, crc.Sum32()); err != nil {
		return nil, err
	}
	if err := e.finishLoad(); err != nil {
		return nil, err
	}
	return e, nil
}

// readHeader reads and decodes the header of a file of size bytes, whose
// length depends on the format version it announces.
func readHeader(f io.Reader, size int64) (*fileHeader, error) {
	if size < headerSizeV1+trailerSize {
		return nil, fmt.Errorf("file is %d bytes, too short for header and trailer (truncated): %w", size, ErrCorruptFile)
	}
	hb := make([]byte, headerSize)
	if _, err := io.ReadFull(f, hb[:12]); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	version, err := headerVersion(hb)
	if err != nil {
		return nil, err
	}
	h := &fileHeader{version: version}
	if size < int64(h.size())+trailerSize {
		return nil, fmt.Errorf("file is %d bytes, too short for header and trailer (truncated): %w", size, ErrCorruptFile)
	}
	hb = hb[:h.size()]
	if _, err := io.ReadFull(f, hb[12:]); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	return decodeHeader(hb, version)
}

func checkTrailer(f io.Reader, sum uint32) error {
	t := make([]byte, trailerSize)
	if _, err := io.ReadFull(f, t); err != nil {
		return fmt.Errorf("read trailer: %w", err)
	}
	if string(t[4:]) != trailerMagic {
		return fmt.Errorf("bad trailer magic: %w", ErrCorruptFile)
	}
	if got := binary.LittleEndian.Uint32(t); got != sum {
		return fmt.Errorf("body checksum mismatch (stored %08x, computed %08x): %w", got, sum, ErrCorruptFile)
	}
	return nil
}

// decodeBody reads the body into a store whose indexes are not built yet.
func decodeBody(h *fileHeader, r *binReader) *Embedded {
	e := &Embedded{opts: h.opts.withDefaults()}
	n := int(h.records)
	rt := &e.recs
	rt.ids = strTable{ends: make([]uint32, n), arena: make([]byte, h.idBytes)}
	rt.syms = strTable{ends: make([]uint32, h.syms), arena: make([]byte, h.symBytes)}
	readArray(r, rt.ids.ends)
	r.raw(rt.ids.arena)
	readArray(r, rt.syms.ends)
	r.raw(rt.syms.arena)
	rt.parent, rt.doc, rt.ordinal = make([]uint32, n), make([]uint32, n), make([]int32, n)
	readArray(r, rt.parent)
	readArray(r, rt.doc)
	readArray(r, rt.ordinal)
	rt.deadBit = make([]uint64, (n+63)/64)

	x := &e.sparse
	x.keys = make([]uint32, h.terms)
	counts := make([]uint32, h.terms)
	readArray(r, x.keys)
	readArray(r, counts)
	all := make([]posting, h.postings)
	readArray(r, all)
	x.total = len(all)
	x.lists = make([][]posting, len(counts))
	off := uint64(0)
	for i, c := range counts {
		if off+uint64(c) > uint64(len(all)) {
			off = uint64(len(all)) + 1 // flagged by finishLoad
			break
		}
		x.lists[i] = all[off : off+uint64(c) : off+uint64(c)]
		off += uint64(c)
	}
	if off != uint64(len(all)) {
		x.lists = nil
	}
	readBlockMaxima(h, r, x, counts)
	e.dense = flatIndex{dims: int(h.dims), owner: make([]uint32, h.rows), data: make([]float32, h.rows*h.dims)}
	readArray(r, e.dense.owner)
	readArray(r, e.dense.data)
	return e
}

// readBlockMaxima reads the block maxima a version 2 file stores, or
// computes them for a version 1 file. Maxima whose count disagrees with the
// lists are left out, which finishLoad reports.
func readBlockMaxima(h *fileHeader, r *binReader, x *invertedIndex, counts []uint32) {
	if h.version == 1 {
		if x.lists != nil {
			x.rebuildBlockMaxima()
		}
		return
	}
	all := make([]float32, h.blocks)
	readArray(r, all)
	if x.lists == nil || totalBlocks(counts) != h.blocks {
		return
	}
	x.blockMax = make([][]float32, len(counts))
	for i, c := range counts {
		n := blocksOf(int(c))
		x.blockMax[i], all = all[:n:n], all[n:]
	}
}

// finishLoad validates the decoded data and builds the hash indexes and, if
// wanted, the HNSW graph.
func (e *Embedded) finishLoad() error {
	if err := e.validate(); err != nil {
		return fmt.Errorf("%w: %w", err, ErrCorruptFile)
	}
	e.recs.ids.seed, e.recs.syms.seed = maphash.MakeSeed(), maphash.MakeSeed()
	e.recs.syms.reindex()
	if dup, ok := e.recs.ids.reindexUnique(); !ok {
		return fmt.Errorf("duplicate id %q: %w", e.recs.ids.str(dup), ErrCorruptFile)
	}
	e.sparse.terms = make(map[uint32]uint32, len(e.sparse.keys))
	for i, t := range e.sparse.keys {
		if _, dup := e.sparse.terms[t]; dup {
			return fmt.Errorf("duplicate term %d: %w", t, ErrCorruptFile)
		}
		e.sparse.terms[t] = uint32(i)
	}
	e.sparse.rebuildGroups()
	if e.wantGraph() {
		e.buildGraph()
	}
	return nil
}
