package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/parentrag/parentrag/internal/mmapfile"
)

// Load reads a store written by Save from dir/File. The
// header checksum, the file size implied by the header, the body checksum
// and every cross-reference are verified before the store is returned, so a
// truncated, extended or corrupted file fails with ErrCorruptFile instead of
// yielding wrong results. Options (metric, HNSW settings) come from the
// file; an HNSW graph is rebuilt when enabled and above its threshold, which
// costs time proportional to the dense data.
//
// On Linux the file is mapped read-only and the store's postings, block
// maxima, term table, record columns, id and symbol arenas and dense rows
// are views into the mapping, so they live in the page cache rather than on
// the Go heap; only the hash indexes over ids, symbols and terms are built
// in memory. Elsewhere, or when mapping fails, the file is read into one
// heap buffer that the store views the same way. A mapped store serves
// searches until Close; its first Upsert or Delete copies it onto the heap
// and releases the mapping, and a store dropped without Close releases it
// when it is garbage collected. The file must not be truncated or rewritten
// in place while mapped (Save replaces it by rename, which is safe).
func Load(dir string) (*Store, error) {
	path := filepath.Join(dir, File)
	e, err := loadFile(path, true)
	if err != nil {
		return nil, fmt.Errorf("load embedded store %s: %w", path, err)
	}
	return e, nil
}

// loadFile loads the file at path, from a mapping when mapped is true and
// the platform can map it, otherwise from a heap copy.
func loadFile(path string, mapped bool) (*Store, error) {
	b, unmap, err := readFileBytes(path, mapped)
	if err != nil {
		return nil, err
	}
	e, viewed, err := decodeFile(b)
	if err != nil {
		if unmap {
			err = errors.Join(err, mmapfile.Unmap(b))
		}
		return nil, err
	}
	if unmap {
		e.attachMapping(b, viewed)
	}
	return e, nil
}

// readFileBytes returns the whole file at path: a read-only mapping (unmap
// true) when mapped is true and mapping works, else an 8-byte aligned heap
// copy, so that the views decodeFile takes are aligned either way.
func readFileBytes(path string, mapped bool) (b []byte, unmap bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	size := st.Size()
	if mapped && size >= headerSizeV1+trailerSize {
		if b, err := mmapfile.Map(f, size); err == nil {
			return b, true, nil
		}
	}
	words := make([]uint64, (size+7)/8)
	b = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), 8*len(words))[:size:size]
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, false, fmt.Errorf("read: %w", err)
	}
	return b, false, nil
}

// decodeFile verifies and decodes a whole file held in b, which the
// returned store's columns view; viewed is how many bytes they view rather
// than copy (sections that are misaligned, or any on a big-endian host,
// are copied).
func decodeFile(b []byte) (e *Store, viewed int64, err error) {
	size := int64(len(b))
	h, err := readHeader(b)
	if err != nil {
		return nil, 0, err
	}
	body, err := h.bodySize(size)
	if err != nil {
		return nil, 0, err
	}
	if want := int64(h.size()) + body + trailerSize; want != size {
		return nil, 0, fmt.Errorf("file is %d bytes but its header implies %d (truncated or extended): %w", size, want, ErrCorruptFile)
	}
	bodyBytes := b[h.size() : int64(h.size())+body]
	if err := checkTrailer(b[size-trailerSize:], crc32.Checksum(bodyBytes, castagnoli)); err != nil {
		return nil, 0, err
	}
	r := &sectionReader{rest: bodyBytes}
	e = assemble(h, r.sections(h))
	if err := e.finishLoad(); err != nil {
		return nil, 0, err
	}
	return e, r.viewed, nil
}

// readHeader decodes the header at the start of file b, whose length
// depends on the format version it announces.
func readHeader(b []byte) (*fileHeader, error) {
	short := fmt.Errorf("file is %d bytes, too short for header and trailer (truncated): %w", len(b), ErrCorruptFile)
	if len(b) < headerSizeV1+trailerSize {
		return nil, short
	}
	version, err := headerVersion(b[:12])
	if err != nil {
		return nil, err
	}
	h := &fileHeader{version: version}
	if len(b) < h.size()+trailerSize {
		return nil, short
	}
	return decodeHeader(b[:h.size()], version)
}

// checkTrailer checks the trailer t against the body checksum sum.
func checkTrailer(t []byte, sum uint32) error {
	if string(t[4:]) != trailerMagic {
		return fmt.Errorf("bad trailer magic: %w", ErrCorruptFile)
	}
	if got := binary.LittleEndian.Uint32(t); got != sum {
		return fmt.Errorf("body checksum mismatch (stored %08x, computed %08x): %w", got, sum, ErrCorruptFile)
	}
	return nil
}

// fileSections are the arrays of a body in file order, before the store is
// assembled from them.
type fileSections struct {
	idEnds, symEnds     []uint32
	idArena, symArena   []byte
	parent, doc         []uint32
	ordinal             []int32
	keys, counts, owner []uint32
	postings            []posting
	blockMax            []float32 // nil in version 1, which stores none
	dense               []float32
}

// sectionReader cuts a body into sections, counting the bytes it views.
type sectionReader struct {
	rest   []byte
	viewed int64
}

// sections cuts the body h describes; its size was checked against h.
func (r *sectionReader) sections(h *fileHeader) *fileSections {
	s := &fileSections{}
	s.idEnds = section[uint32](r, h.records)
	s.idArena = r.bytes(h.idBytes)
	s.symEnds = section[uint32](r, h.syms)
	s.symArena = r.bytes(h.symBytes)
	s.parent = section[uint32](r, h.records)
	s.doc = section[uint32](r, h.records)
	s.ordinal = section[int32](r, h.records)
	s.keys = section[uint32](r, h.terms)
	s.counts = section[uint32](r, h.terms)
	s.postings = section[posting](r, h.postings)
	s.blockMax = section[float32](r, h.blocks)
	s.owner = section[uint32](r, h.rows)
	s.dense = section[float32](r, h.rows*h.dims)
	return s
}

// bytes returns the next n bytes as a view whose capacity ends with it, so
// that appending to it never writes past it.
func (r *sectionReader) bytes(n uint64) []byte {
	b := r.rest[:n:n]
	r.rest = r.rest[n:]
	r.viewed += int64(n)
	return b
}

// section returns the next n words-based elements: a view of the body when
// the host is little-endian and the section is aligned for T, a decoded
// copy otherwise. Its capacity ends with it.
func section[T word](r *sectionReader, n uint64) []T {
	if n == 0 {
		return nil
	}
	var zero T
	size := n * uint64(unsafe.Sizeof(zero))
	b := r.rest[:size:size]
	r.rest = r.rest[size:]
	p := unsafe.Pointer(unsafe.SliceData(b))
	if littleEndian && uintptr(p)%unsafe.Alignof(zero) == 0 {
		r.viewed += int64(size)
		return unsafe.Slice((*T)(p), n)
	}
	out := make([]T, n)
	words := unsafe.Slice((*uint32)(unsafe.Pointer(&out[0])), size/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// assemble builds a store whose indexes are not built yet from the
// sections of a body.
func assemble(h *fileHeader, s *fileSections) *Store {
	e := &Store{opts: h.opts.withDefaults()}
	rt := &e.recs
	rt.ids = strTable{ends: s.idEnds, arena: s.idArena}
	rt.syms = strTable{ends: s.symEnds, arena: s.symArena}
	rt.parent, rt.doc, rt.ordinal = s.parent, s.doc, s.ordinal
	rt.deadBit = make([]uint64, (h.records+63)/64)

	x := &e.sparse
	x.keys = s.keys
	x.total = len(s.postings)
	x.lists = splitLists(s.postings, s.counts)
	if h.version == 1 {
		if x.lists != nil {
			x.rebuildBlockMaxima()
		}
	} else if x.lists != nil && totalBlocks(s.counts) == h.blocks {
		x.blockMax = splitBlockMaxima(s.blockMax, s.counts)
	}
	e.dense = flatIndex{dims: int(h.dims), owner: s.owner, data: s.dense}
	return e
}

// splitLists cuts all into one list per term of the given counts, or
// returns nil when the counts do not add up to len(all), which finishLoad
// reports.
func splitLists(all []posting, counts []uint32) [][]posting {
	lists := make([][]posting, len(counts))
	off := uint64(0)
	for i, c := range counts {
		end := off + uint64(c)
		if end > uint64(len(all)) {
			return nil
		}
		lists[i] = all[off:end:end]
		off = end
	}
	if off != uint64(len(all)) {
		return nil
	}
	return lists
}

// splitBlockMaxima cuts all into the block maxima of lists of the given
// counts; the caller checked the total.
func splitBlockMaxima(all []float32, counts []uint32) [][]float32 {
	out := make([][]float32, len(counts))
	for i, c := range counts {
		n := blocksOf(int(c))
		out[i], all = all[:n:n], all[n:]
	}
	return out
}

// finishLoad validates the decoded data and builds the hash indexes and, if
// wanted, the HNSW graph.
func (e *Store) finishLoad() error {
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
