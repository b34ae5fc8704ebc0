package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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
	child        postingLists
	parent       postingLists
	idEnds       []uint32
	ordinals     []uint32
	parentDocs   []uint32
	parentIDEnds []uint32
	docEnds      []uint32
	terms, ids   []byte
	parentIDs    []byte
	docIDs       []byte
}

// postingLists are the postings of every term, by term: child postings
// (childWords words each) or parent postings (parentWords words each).
type postingLists struct {
	ends  []uint32
	words []uint32
}

// span returns where the k-th of the lists that end at ends starts and
// ends.
func span(ends []uint32, k int) (lo, hi uint32) {
	if k > 0 {
		lo = ends[k-1]
	}
	return lo, ends[k]
}

// childList is one term's child postings.
type childList []uint32

// children returns term k's child postings.
func (s *Segment) children(k int) childList {
	lo, hi := span(s.child.ends, k)
	return childList(s.child.words[childWords*lo : childWords*hi])
}

// len is the number of postings.
func (l childList) len() int { return len(l) / childWords }

// slot is the i-th posting's child.
func (l childList) slot(i int) uint32 { return l[childWords*i] }

// tf is the term's frequency in the i-th posting's child.
func (l childList) tf(i int) uint32 { return l[childWords*i+1] }

// parentList is one term's parent postings.
type parentList []uint32

// parents returns term k's parent postings.
func (s *Segment) parents(k int) parentList {
	lo, hi := span(s.parent.ends, k)
	return parentList(s.parent.words[parentWords*lo : parentWords*hi])
}

// len is the number of postings.
func (l parentList) len() int { return len(l) / parentWords }

// parent is the j-th posting's parent.
func (l parentList) parent(j int) uint32 { return l[parentWords*j] }

// context is the term's frequency in the j-th posting's context.
func (l parentList) context(j int) uint32 { return l[parentWords*j+1] }

// first is where the j-th posting's children begin among the term's
// child postings.
func (l parentList) first(j int) uint32 { return l[parentWords*j+2] }

// childSpan returns where the j-th posting's children begin and end among
// the n child postings of the term.
func (l parentList) childSpan(j, n int) (int, int) {
	end := n
	if j+1 < l.len() {
		end = int(l.first(j + 1))
	}
	return int(l.first(j)), end
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
	s.childTokens = r.next(uint64(h.children))
	s.parentFirst = r.next(uint64(h.parents) + 1)
	s.parentTokens = r.next(uint64(h.parents))
	s.termEnds = r.next(uint64(h.terms))
	s.child = postingLists{ends: r.next(uint64(h.terms)), words: r.next(childWords * uint64(h.childPostings))}
	s.parent = postingLists{ends: r.next(uint64(h.terms)), words: r.next(parentWords * uint64(h.parentPostings))}
	s.idEnds = r.next(uint64(h.children))
	s.ordinals = r.next(uint64(h.children))
	s.parentDocs = r.next(uint64(h.parents))
	s.parentIDEnds = r.next(uint64(h.parents))
	s.docEnds = r.next(uint64(h.docs))
	s.terms = r.arena(h.termBytes)
	s.ids = r.arena(h.idBytes)
	s.parentIDs = r.arena(h.parentIDBytes)
	s.docIDs = r.arena(h.docIDBytes)
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
	h.childPostings, h.parentPostings, h.termBytes, h.idBytes = u(5), u(6), u(7), u(8)
	h.docs, h.parentIDBytes, h.docIDBytes = u(9), u(10), u(11)
	h.tokens = binary.LittleEndian.Uint64(data[56:])
	if h.flags&^flagContexts != 0 {
		return h, corrupt("unknown flags %#x", h.flags)
	}
	if u(12) != 0 {
		return h, corrupt("the reserved word is %d, not 0", u(12))
	}
	return h, nil
}

// words reads a segment's sections in order.
type words struct{ rest []byte }

// next returns the next n words: a view of the bytes on a little-endian
// host when they are aligned, a decoded copy otherwise.
func (r *words) next(n uint64) []uint32 {
	b := r.rest[:4*n]
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
