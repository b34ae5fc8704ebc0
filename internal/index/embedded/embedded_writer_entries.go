package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A spilled run stores each term's postings, which are in slot order, as
// entries of bytes. Children of one parent take consecutive slots and,
// with a context weight, the same weight for every context term they do
// not hold themselves, so many postings come in stretches of consecutive
// slots of equal weight. An entry is the uvarint of gap<<1|stretch, where
// gap is the slot's distance from the slot after the previous entry's
// last (from slot 0 for the first), then the weight's 4 bytes, then, for
// a stretch, the uvarint of its length less 2. A posting alone takes 5 or
// 6 bytes instead of 8, a stretch of any length 6 to 9.

// appendEntries appends the entries of postings, in slot order, to dst.
func appendEntries(dst []byte, postings []posting) []byte {
	next := uint32(0)
	for i := 0; i < len(postings); {
		p := postings[i]
		bits := math.Float32bits(p.weight)
		n := 1
		for i+n < len(postings) && postings[i+n].slot == p.slot+uint32(n) && math.Float32bits(postings[i+n].weight) == bits {
			n++
		}
		head := uint64(p.slot-next) << 1
		if n > 1 {
			head |= 1
		}
		dst = binary.AppendUvarint(dst, head)
		dst = binary.LittleEndian.AppendUint32(dst, bits)
		if n > 1 {
			dst = binary.AppendUvarint(dst, uint64(n-2))
		}
		next = p.slot + uint32(n)
		i += n
	}
	return dst
}

// entryExpander turns the entries of a list's groups back into postings,
// a chunk at a time, keeping the list's block maxima as it goes.
type entryExpander struct {
	chunk  []posting
	next   uint64 // the slot after the group's last posting so far
	n      int    // postings of the list so far
	maxima []float32
}

// expanderChunk is how many postings an entryExpander hands over at once.
const expanderChunk = 4096

// errEntries reports spilled postings that do not decode.
var errEntries = errors.New("spilled postings: a damaged group")

// reset starts a new list.
func (e *entryExpander) reset() {
	e.n, e.maxima = 0, e.maxima[:0]
}

// expand decodes b, the entries of one group of exactly count postings,
// and calls emit with its postings in order, a chunk at a time (the chunk
// is reused once emit returns). It fails when b does not decode to count
// postings.
func (e *entryExpander) expand(b []byte, count int, emit func([]posting)) error {
	if cap(e.chunk) < expanderChunk {
		e.chunk = make([]posting, 0, expanderChunk)
	}
	out, got := e.chunk[:0], 0
	e.next = 0
	for len(b) > 0 {
		slot, n, w, rest, err := e.entry(b)
		if err != nil {
			return err
		}
		b = rest
		if got += n; got > count {
			return fmt.Errorf("%w: more than its %d postings", errEntries, count)
		}
		e.extendMaxima(n, absWeight(w))
		for k := range uint32(n) {
			if len(out) == cap(out) {
				emit(out)
				out = out[:0]
			}
			out = append(out, posting{slot: slot + k, weight: w})
		}
	}
	if got != count {
		return fmt.Errorf("%w: %d postings, not %d", errEntries, got, count)
	}
	emit(out)
	return nil
}

// entry decodes the entry at the start of b: its first slot, how many
// postings it holds, their weight, and what follows it.
func (e *entryExpander) entry(b []byte) (slot uint32, n int, w float32, rest []byte, err error) {
	const slots = 1 << 32
	head, k := binary.Uvarint(b)
	if k <= 0 || len(b) < k+4 || head>>1 >= slots-e.next {
		return 0, 0, 0, nil, errEntries
	}
	first, w, b := e.next+head>>1, math.Float32frombits(binary.LittleEndian.Uint32(b[k:])), b[k+4:]
	length := uint64(1)
	if head&1 != 0 {
		more, k := binary.Uvarint(b)
		if k <= 0 || more > slots-first-2 {
			return 0, 0, 0, nil, errEntries
		}
		length, b = more+2, b[k:]
	}
	e.next = first + length
	return uint32(first), int(length), w, b, nil
}

// extendMaxima extends the block maxima, as appendBlockMax does posting
// by posting, by n postings of weight magnitude a.
func (e *entryExpander) extendMaxima(n int, a float32) {
	for n > 0 {
		if e.n%blockSize == 0 {
			e.maxima = append(e.maxima, a)
		} else if last := &e.maxima[len(e.maxima)-1]; a > *last {
			*last = a
		}
		take := min(n, blockSize-e.n%blockSize)
		e.n += take
		n -= take
	}
}
