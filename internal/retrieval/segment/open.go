package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"unsafe"
)

// ErrCorrupt reports bytes that are not a segment Open can trust: too
// short, of another format or version, failing their checksum, or whose
// sections contradict each other.
var ErrCorrupt = errors.New("corrupt child index segment")

// Segment is an opened segment. Its arrays are views of the bytes it was
// opened from (on a little-endian host; copies elsewhere), which must not
// change while it is used. It is safe for concurrent reads.
type Segment struct {
	h            header
	childTokens  []uint32
	parentFirst  []uint32
	parentTokens []uint32
	termEnds     []uint32
	child        childLists
	parent       parentLists
	blockEnds    []uint32
	blocks       []uint32
	idEnds       []uint32
	terms, ids   []byte
}

// childLists are the child postings of every term, by term.
type childLists struct {
	ends, slot, tf []uint32
}

// parentLists are the parent postings of every term, by term.
type parentLists struct {
	ends, parent, context, child, childLen []uint32
}

// span returns where the k-th of the lists that end at ends starts and
// ends.
func span(ends []uint32, k int) (lo, hi uint32) {
	if k > 0 {
		lo = ends[k-1]
	}
	return lo, ends[k]
}

// list returns the slots and frequencies of term k's child postings.
func (c *childLists) list(k int) (slot, tf []uint32) {
	lo, hi := span(c.ends, k)
	return c.slot[lo:hi], c.tf[lo:hi]
}

// termParents is one term's parent postings and blocks.
type termParents struct {
	parent, context, child, childLen []uint32
	blocks                           []uint32 // blockWords per block
}

// parents returns term k's parent postings and blocks.
func (s *Segment) parents(k int) termParents {
	lo, hi := span(s.parent.ends, k)
	blo, bhi := span(s.blockEnds, k)
	p := &s.parent
	return termParents{parent: p.parent[lo:hi], context: p.context[lo:hi], child: p.child[lo:hi], childLen: p.childLen[lo:hi], blocks: s.blocks[blockWords*blo : blockWords*bhi]}
}

// Open checks data and returns the segment it holds, failing with
// ErrCorrupt (wrapped) when data is not a sound segment. It reads every
// byte once: the checksum, then every cross-reference, so that no search
// can index out of range whatever the bytes.
func Open(data []byte) (*Segment, error) {
	h, err := readHeader(data)
	if err != nil {
		return nil, err
	}
	if want := headerSize + 4*h.words() + trailerSize; uint64(len(data)) != want {
		return nil, corrupt("%d bytes where its header makes %d", len(data), want)
	}
	body := data[:len(data)-trailerSize]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(data[len(body):]); got != want {
		return nil, corrupt("checksum %08x where %08x was written", got, want)
	}
	s := &Segment{h: h}
	r := words{rest: body[headerSize:]}
	s.childTokens = r.next(h.children)
	s.parentFirst = r.next(h.parents + 1)
	s.parentTokens = r.next(h.parents)
	s.termEnds = r.next(h.terms)
	s.child = childLists{ends: r.next(h.terms), slot: r.next(h.childPostings), tf: r.next(h.childPostings)}
	pp := h.parentPostings
	s.parent = parentLists{ends: r.next(h.terms), parent: r.next(pp), context: r.next(pp), child: r.next(pp), childLen: r.next(pp)}
	s.blockEnds = r.next(h.terms)
	s.blocks = r.next(blockWords * h.blocks)
	s.idEnds = r.next(h.children)
	s.terms = r.arena(h.termBytes)
	s.ids = r.arena(h.idBytes)
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// corrupt returns an ErrCorrupt with a reason.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// readHeader decodes and checks the fixed header.
func readHeader(data []byte) (header, error) {
	var h header
	if len(data) < headerSize+trailerSize {
		return h, corrupt("%d bytes is too short", len(data))
	}
	if string(data[:4]) != fileMagic {
		return h, corrupt("magic %q is not %q", data[:4], fileMagic)
	}
	u := func(i int) uint32 { return binary.LittleEndian.Uint32(data[4+4*i:]) }
	if v := u(0); v != fileVersion {
		return h, corrupt("format version %d; this parentrag reads version %d", v, fileVersion)
	}
	h.flags, h.children, h.parents, h.terms = u(1), u(2), u(3), u(4)
	h.childPostings, h.parentPostings, h.blocks, h.termBytes, h.idBytes = u(5), u(6), u(7), u(8), u(9)
	h.tokens = binary.LittleEndian.Uint64(data[48:])
	if h.flags&^flagContexts != 0 {
		return h, corrupt("unknown flags %#x", h.flags)
	}
	if u(10) != 0 {
		return h, corrupt("reserved word is %d, not 0", u(10))
	}
	if uint64(h.blocks) > uint64(h.parentPostings) || blockWords*uint64(h.blocks) > math.MaxUint32 {
		return h, corrupt("%d blocks for %d parent postings", h.blocks, h.parentPostings)
	}
	return h, nil
}

// words reads a segment's sections in order.
type words struct{ rest []byte }

// next returns the next n words: a view of the bytes on a little-endian
// host when they are aligned, a decoded copy otherwise.
func (r *words) next(n uint32) []uint32 {
	b := r.rest[:4*uint64(n)]
	r.rest = r.rest[len(b):]
	if n == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if littleEndian && uintptr(p)%4 == 0 {
		return unsafe.Slice((*uint32)(p), n)
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// arena returns the next n bytes and skips their padding.
func (r *words) arena(n uint32) []byte {
	b := r.rest[:n:n]
	r.rest = r.rest[padded(n):]
	return b
}

// littleEndian reports whether the host stores words little-endian.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()
