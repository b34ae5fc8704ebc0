package embedded

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"

	"github.com/parentrag/parentrag/internal/index"
)

// The persisted file, all integers little-endian:
//
//	header  (112 bytes)
//	  0  magic "PRGVSEMB"
//	  8  format version (uint32, currently 2)
//	 12  metric (uint8), HNSW enabled (uint8), 2 zero bytes
//	 16  HNSW threshold, M, ef construction, ef search (uint32 each)
//	 32  records, id bytes, symbols, symbol bytes, terms, postings,
//	     dense dims, dense rows, posting blocks (uint64 each)
//	104  CRC-32C of bytes 0..103 (uint32), 4 zero bytes
//	body    (size implied by the header counts)
//	  id end offsets        records x uint32
//	  id arena              id bytes
//	  symbol end offsets    symbols x uint32
//	  symbol arena          symbol bytes
//	  parent symbol         records x uint32
//	  document symbol       records x uint32
//	  ordinal               records x int32
//	  term ids              terms x uint32
//	  postings per term     terms x uint32
//	  postings              postings x (slot uint32, weight float32),
//	                        grouped by term in term-table order
//	  block maxima          posting blocks x float32: for each term in
//	                        term-table order, the largest weight magnitude
//	                        of each run of blockSize (128) postings
//	  dense row owner slot  rows x uint32
//	  dense data            rows x dims x float32
//	trailer (8 bytes)
//	  CRC-32C of the body (uint32), "PRGV"
//
// Only live records are written, renumbered 0..records-1, so a loaded store
// has no tombstones.
//
// Sections are viewed in place, not decoded, when loaded on a
// little-endian host, so they must be aligned for their element type (4
// bytes; a posting is two words). The header and every word array are
// multiples of 4 bytes long; only the id and symbol arenas are not. When
// the two arenas together are not a multiple of 4, Save appends one symbol
// of 1 to 3 zero bytes that no record refers to, which aligns every section
// after the symbol arena (any version 2 reader accepts the extra symbol).
// Sections that are still misaligned (the symbol offsets after an id arena
// of odd length, or everything after the arenas in a file written before
// the padding) are copied while loading.
//
// Version 1 files (a 104-byte header without the posting block count, CRC
// at 96, and no block maxima) still load: their block maxima are computed
// from the postings while loading. Any other version is refused with
// ErrCorruptFile naming the versions this build reads.
const (
	fileMagic     = "PRGVSEMB"
	trailerMagic  = "PRGV"
	formatVersion = 2
	headerSize    = 112
	headerSizeV1  = 104
	trailerSize   = 8
	ioChunk       = 256 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// alignPad returns how many bytes bring n up to a multiple of 4.
func alignPad(n uint64) int { return int(-n & 3) }

// fileHeader is the decoded header.
type fileHeader struct {
	version                          uint32
	opts                             Options
	records, idBytes, syms, symBytes uint64
	terms, postings, dims, rows      uint64
	blocks                           uint64 // 0 in version 1, which stores none
}

// size returns the header's length in the file.
func (h *fileHeader) size() int {
	if h.version == 1 {
		return headerSizeV1
	}
	return headerSize
}

func (h *fileHeader) encode() []byte {
	b := make([]byte, headerSize)
	copy(b, fileMagic)
	le := binary.LittleEndian
	le.PutUint32(b[8:], h.version)
	b[12] = byte(h.opts.Metric)
	if h.opts.HNSW {
		b[13] = 1
	}
	for i, v := range []int{h.opts.HNSWThreshold, h.opts.HNSWM, h.opts.HNSWEfConstruction, h.opts.HNSWEfSearch} {
		le.PutUint32(b[16+4*i:], uint32(min(max(v, 0), math.MaxUint32)))
	}
	for i, v := range h.counts() {
		le.PutUint64(b[32+8*i:], *v)
	}
	le.PutUint32(b[104:], crc32.Checksum(b[:104], castagnoli))
	return b
}

// counts returns the header's counts in file order; version 1 has no
// posting block count.
func (h *fileHeader) counts() []*uint64 {
	c := []*uint64{&h.records, &h.idBytes, &h.syms, &h.symBytes, &h.terms, &h.postings, &h.dims, &h.rows, &h.blocks}
	if h.version == 1 {
		return c[:8]
	}
	return c
}

// headerVersion checks the magic of the first 12 bytes of a file and
// returns its format version, refusing versions this build cannot read.
func headerVersion(b []byte) (uint32, error) {
	if string(b[:8]) != fileMagic {
		return 0, fmt.Errorf("bad magic %q, not an embedded vector store file: %w", b[:8], ErrCorruptFile)
	}
	v := binary.LittleEndian.Uint32(b[8:])
	if v != 1 && v != formatVersion {
		return 0, fmt.Errorf("unsupported format version %d (this build reads 1 and %d): %w", v, formatVersion, ErrCorruptFile)
	}
	return v, nil
}

// decodeHeader decodes a header of the given version; b holds exactly its
// bytes.
func decodeHeader(b []byte, version uint32) (*fileHeader, error) {
	le := binary.LittleEndian
	h := &fileHeader{version: version}
	crcAt := h.size() - 8
	if got, want := le.Uint32(b[crcAt:]), crc32.Checksum(b[:crcAt], castagnoli); got != want {
		return nil, fmt.Errorf("header checksum mismatch (stored %08x, computed %08x): %w", got, want, ErrCorruptFile)
	}
	h.opts.Metric = index.Metric(b[12])
	if !h.opts.Metric.Valid() || b[13] > 1 {
		return nil, fmt.Errorf("bad metric or hnsw flag in header: %w", ErrCorruptFile)
	}
	h.opts.HNSW = b[13] == 1
	h.opts.HNSWThreshold = int(le.Uint32(b[16:]))
	h.opts.HNSWM = int(le.Uint32(b[20:]))
	h.opts.HNSWEfConstruction = int(le.Uint32(b[24:]))
	h.opts.HNSWEfSearch = int(le.Uint32(b[28:]))
	for i, v := range h.counts() {
		*v = le.Uint64(b[32+8*i:])
	}
	return h, nil
}

// bodySize returns the body length the header implies, rejecting counts no
// file of fileSize bytes could hold (which also rules out overflow).
func (h *fileHeader) bodySize(fileSize int64) (int64, error) {
	limit := uint64(fileSize)
	for _, v := range h.counts() {
		if *v > limit {
			return 0, fmt.Errorf("header count %d exceeds file size %d: %w", *v, fileSize, ErrCorruptFile)
		}
	}
	if h.rows != 0 && h.dims > limit/h.rows {
		return 0, fmt.Errorf("header dense block %dx%d exceeds file size: %w", h.rows, h.dims, ErrCorruptFile)
	}
	if h.records >= maxArena || h.idBytes > maxArena || h.syms >= maxArena || h.symBytes > maxArena {
		return 0, fmt.Errorf("header counts exceed store limits: %w", ErrCorruptFile)
	}
	n := 16*h.records + h.idBytes + 4*h.syms + h.symBytes + 8*h.terms + 8*h.postings + 4*h.blocks + 4*h.rows + 4*h.rows*h.dims
	return int64(n), nil
}

// binWriter encodes little-endian values through a private buffer, counting
// bytes and keeping the first error.
type binWriter struct {
	w   io.Writer
	buf []byte
	n   int64
	err error
}

func newBinWriter(w io.Writer) *binWriter {
	return &binWriter{w: w, buf: make([]byte, 0, ioChunk)}
}

func (w *binWriter) flush() {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.w.Write(w.buf)
	}
	w.n += int64(len(w.buf))
	w.buf = w.buf[:0]
}

func (w *binWriter) u32(v uint32) {
	if len(w.buf)+4 > cap(w.buf) {
		w.flush()
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, v)
}

// writeArray writes src as little-endian words: its raw memory on
// little-endian hosts, word by word elsewhere.
func writeArray[T word](w *binWriter, src []T) {
	if len(src) == 0 {
		return
	}
	words := unsafe.Slice((*uint32)(unsafe.Pointer(&src[0])), int(unsafe.Sizeof(src[0]))/4*len(src))
	if littleEndian {
		w.raw(unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 4*len(words)))
		return
	}
	for _, v := range words {
		w.u32(v)
	}
}

func (w *binWriter) raw(b []byte) {
	for len(b) > 0 {
		if len(w.buf) == cap(w.buf) {
			w.flush()
		}
		n := min(len(b), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, b[:n]...)
		b = b[n:]
	}
}

// word is a 4-byte array element; posting is two words.
type word interface {
	~uint32 | ~int32 | ~float32 | posting
}

// The file stores a posting as its slot then its weight, which is also its
// memory layout; this fails to compile if the struct ever changes size.
var _ = [1]struct{}{}[unsafe.Sizeof(posting{})-8+unsafe.Offsetof(posting{}.weight)-4]

// littleEndian reports whether the host stores words little-endian, in which
// case arrays are written from and viewed in their memory with no decoding.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// validate checks every offset and cross-reference of a decoded body, so a
// file that passed its checksums but was written wrongly still cannot make
// the store index out of range.
func (e *Store) validate() error {
	r := &e.recs
	if err := checkEnds(r.ids.ends, len(r.ids.arena), true); err != nil {
		return fmt.Errorf("id offsets: %w", err)
	}
	if err := checkEnds(r.syms.ends, len(r.syms.arena), false); err != nil {
		return fmt.Errorf("symbol offsets: %w", err)
	}
	nsym := uint32(r.syms.len())
	for s := range r.parent {
		if r.parent[s] >= nsym || r.doc[s] >= nsym {
			return fmt.Errorf("record %d refers to symbol beyond %d", s, nsym)
		}
	}
	x := &e.sparse
	if len(x.lists) != len(x.keys) || len(x.blockMax) != len(x.keys) {
		return fmt.Errorf("posting counts do not add up to %d postings", x.total)
	}
	n := uint32(r.slots())
	listed := 0
	for li, list := range x.lists {
		listed += len(list)
		if len(list) == 0 {
			return fmt.Errorf("term %d has no postings", x.keys[li])
		}
		for _, p := range list {
			if p.slot >= n || p.weight == 0 || !finite(p.weight) {
				return fmt.Errorf("term %d has a bad posting (slot %d, weight %v)", x.keys[li], p.slot, p.weight)
			}
		}
		if !checkBlockMaxima(list, x.blockMax[li]) {
			return fmt.Errorf("term %d has block maxima that disagree with its postings", x.keys[li])
		}
	}
	if listed != x.total {
		return fmt.Errorf("posting counts do not add up to %d postings", x.total)
	}
	for _, slot := range e.dense.owner {
		if slot >= n {
			return fmt.Errorf("dense row owner %d beyond %d records", slot, n)
		}
	}
	for i, v := range e.dense.data {
		if !finite(v) {
			return fmt.Errorf("dense value %d is not finite", i)
		}
	}
	return nil
}

// checkEnds checks end offsets rise to exactly size (strictly when entries
// must be non-empty).
func checkEnds(ends []uint32, size int, strict bool) error {
	prev := uint32(0)
	for i, end := range ends {
		if end < prev || (strict && end == prev) {
			return fmt.Errorf("offset %d out of order", i)
		}
		prev = end
	}
	if int(prev) != size {
		return fmt.Errorf("offsets end at %d, arena has %d bytes", prev, size)
	}
	return nil
}

func finite(x float32) bool {
	return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
}
