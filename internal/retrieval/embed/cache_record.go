package embed

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
)

// The log file of a FileCache is cacheMagic followed by records, each
//
//	key [32]byte | n uint32 | n float32 values | crc32c uint32
//
// little-endian, the CRC (Castagnoli) covering everything before it.
const (
	cacheMagic    = "parentrag embedding cache v1\n"
	recordHeader  = 32 + 4
	recordTrailer = 4
	// maxCacheOffset bounds the log at 1 TiB, so an offset fits the 40 bits
	// an indexEntry keeps for it.
	maxCacheOffset = 1 << 40
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordSize is the length on disk of a record of dims values.
func recordSize(dims int) int64 {
	return recordHeader + 4*int64(dims) + recordTrailer
}

// indexEntry locates one record: its offset in the top 40 bits and its
// number of values in the low 24, so the index spends 8 bytes per key. The
// zero entry means absent, since no record starts at offset 0.
type indexEntry uint64

// newIndexEntry packs a record's offset (< maxCacheOffset) and dims
// (<= maxCacheDims).
func newIndexEntry(off int64, dims int) indexEntry {
	return indexEntry(uint64(off)<<24 | uint64(dims))
}

// offset is where the record starts in the log.
func (e indexEntry) offset() int64 { return int64(e >> 24) }

// dims is how many values the record holds.
func (e indexEntry) dims() int { return int(e & (1<<24 - 1)) }

// size is the record's length on disk.
func (e indexEntry) size() int64 { return recordSize(e.dims()) }

// appendRecord appends the encoding of (key, dense) to buf; float bits are
// kept exactly, NaN payloads included.
func appendRecord(buf []byte, key [32]byte, dense []float32) []byte {
	start := len(buf)
	buf = append(buf, key[:]...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(dense)))
	for _, f := range dense {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
	}
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[start:], castagnoli))
}

// decodeRecord returns the values of rec, one whole record, when it is
// stored under want, is as long as it claims and its CRC matches; ok is
// false otherwise.
func decodeRecord(rec []byte, want [32]byte) (dense []float32, ok bool) {
	if len(rec) < recordHeader+recordTrailer || [32]byte(rec[:32]) != want || !recordIntact(rec) {
		return nil, false
	}
	dense = make([]float32, (len(rec)-recordHeader-recordTrailer)/4)
	for i := range dense {
		dense[i] = math.Float32frombits(binary.LittleEndian.Uint32(rec[recordHeader+4*i:]))
	}
	return dense, true
}

// recordIntact reports whether rec's length matches the count it claims
// and its CRC matches its contents.
func recordIntact(rec []byte) bool {
	n := binary.LittleEndian.Uint32(rec[32:])
	if int64(len(rec)) != recordSize(int(n)) {
		return false
	}
	body := len(rec) - recordTrailer
	return crc32.Checksum(rec[:body], castagnoli) == binary.LittleEndian.Uint32(rec[body:])
}

// scanRecords reads the records of r, which holds the log from offset base
// to its end, adding each intact one to index, and returns the offset just
// past the last intact record: the start of a torn or corrupt tail, or the
// end of the log. Only a read error other than a short read fails it.
func scanRecords(r io.Reader, base int64, index map[[32]byte]indexEntry) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	off := base
	var rec []byte
	for {
		head, err := br.Peek(recordHeader)
		if err != nil {
			return off, eofIsEnd(err)
		}
		n := binary.LittleEndian.Uint32(head[32:])
		if n == 0 || n > maxCacheDims {
			return off, nil
		}
		size := recordSize(int(n))
		rec = grow(rec, int(size))
		if _, err := io.ReadFull(br, rec); err != nil {
			return off, eofIsEnd(err)
		}
		if !recordIntact(rec) {
			return off, nil
		}
		index[[32]byte(rec[:32])] = newIndexEntry(off, int(n))
		off += size
	}
}

// eofIsEnd maps a short read, which marks the end of the intact records,
// to nil and keeps any other error.
func eofIsEnd(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}

// grow returns a slice of length n, reusing buf's storage when it is big
// enough.
func grow(buf []byte, n int) []byte {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]byte, n)
}
