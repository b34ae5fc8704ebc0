package indexer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// Pack layout (integers in the footer are unsigned varints, strings a
// length then bytes):
//
//	magic "PRUPACK2"
//	units    each as a build spills it (see spillAnalyses): its split,
//	         then its analyses with every term as an id of the term table
//	footer   term table: count, then the terms, by id |
//	         units: count, then per unit its key (a string of 32 bytes),
//	         offset, length, CRC-32C of its bytes, parents, children
//	trailer  footer offset (8 bytes) | CRC-32C of the footer (4 bytes) |
//	         "PRUP", little endian
//
// The pack of a scope is the spill of the last build of that scope, kept:
// its term table is the ids that build gave, which the next build gives
// the same terms again (bm25.NewCorpusStatsOf), so a reused unit is
// counted from its ids and copied into the next pack as it is.
const (
	packMagic        = "PRUPACK2"
	packTrailerMagic = "PRUP"
	packTrailerSize  = 8 + 4 + len(packTrailerMagic)
)

// errDamagedPack reports a pack whose frame or footer is not sound.
var errDamagedPack = errors.New("damaged unit pack")

// unitPack is a pack opened to be read: safe for concurrent use.
type unitPack struct {
	f     *os.File
	terms []string
	units map[unitKey]packedUnit
}

// packedUnit is where a unit lies in a pack, and what it holds.
type packedUnit struct {
	off               int64
	n                 int
	sum               uint32
	parents, children int
}

// openPack opens the pack at path and reads its footer.
func openPack(path string) (*unitPack, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p, err := readPackFooter(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// readPackFooter checks the frame of the pack in f and decodes its
// footer.
func readPackFooter(f *os.File) (*unitPack, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	if size < int64(len(packMagic)+packTrailerSize) {
		return nil, errDamagedPack
	}
	head := make([]byte, len(packMagic))
	trailer := make([]byte, packTrailerSize)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, err
	}
	if _, err := f.ReadAt(trailer, size-int64(packTrailerSize)); err != nil {
		return nil, err
	}
	footerOff := binary.LittleEndian.Uint64(trailer)
	end := uint64(size) - uint64(packTrailerSize)
	if string(head) != packMagic || string(trailer[12:]) != packTrailerMagic || footerOff < uint64(len(packMagic)) || footerOff > end {
		return nil, errDamagedPack
	}
	footer := make([]byte, end-footerOff)
	if _, err := f.ReadAt(footer, int64(footerOff)); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if crc32.Checksum(footer, castagnoli) != binary.LittleEndian.Uint32(trailer[8:]) {
		return nil, errDamagedPack
	}
	p := &unitPack{f: f}
	if err := p.decodeFooter(footer, int64(footerOff)); err != nil {
		return nil, err
	}
	return p, nil
}

// decodeFooter decodes a pack's footer into p, refusing a unit that lies
// outside the units, which end at unitsEnd.
func (p *unitPack) decodeFooter(footer []byte, unitsEnd int64) error {
	r := &unitReader{s: string(footer), view: true}
	p.terms = r.strs()
	units := r.count()
	p.units = make(map[unitKey]packedUnit, units)
	for range units {
		var key unitKey
		if raw := r.str(); len(raw) == len(key) {
			copy(key[:], raw)
		} else {
			return errDamagedPack
		}
		off, n, sum, parents, children := r.uint(), r.uint(), r.uint(), r.uint(), r.uint()
		if r.err != nil || off < uint64(len(packMagic)) || n > uint64(unitsEnd) || off > uint64(unitsEnd)-n || sum > 1<<32-1 || parents > n || children > n {
			return errDamagedPack
		}
		p.units[key] = packedUnit{off: int64(off), n: int(n), sum: uint32(sum), parents: int(parents), children: int(children)}
	}
	if r.err != nil || r.s != "" {
		return errDamagedPack
	}
	return nil
}

// unit returns the bytes of the unit of key, checked against their
// CRC-32C, and where it lies; false when the pack lacks it or it is
// damaged.
func (p *unitPack) unit(key unitKey) ([]byte, packedUnit, bool) {
	u, ok := p.units[key]
	if !ok {
		return nil, u, false
	}
	data := make([]byte, u.n)
	if _, err := p.f.ReadAt(data, u.off); err != nil || crc32.Checksum(data, castagnoli) != u.sum {
		return nil, u, false
	}
	return data, u, true
}

// close closes the pack's file.
func (p *unitPack) close() {
	if p != nil {
		p.f.Close()
	}
}

// encodePackFooter encodes the footer and trailer of a pack whose units,
// ending at offset end, are refs and whose term table is terms.
func encodePackFooter(terms []string, refs []spillRef, end int64) []byte {
	w := &unitWriter{}
	w.strs(terms)
	w.uint(uint64(len(refs)))
	for _, ref := range refs {
		w.str(string(ref.key[:]))
		w.uint(uint64(ref.off))
		w.uint(uint64(ref.n))
		w.uint(uint64(ref.sum))
		w.uint(uint64(ref.parents))
		w.uint(uint64(ref.children))
	}
	sum := crc32.Checksum(w.b, castagnoli)
	w.b = binary.LittleEndian.AppendUint64(w.b, uint64(end))
	w.b = binary.LittleEndian.AppendUint32(w.b, sum)
	return append(w.b, packTrailerMagic...)
}
