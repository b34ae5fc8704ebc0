package indexer

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
)

// unitSpill is the file a streaming build keeps its units in between its
// two passes: the first pass appends each unit (see spillAnalyses), which
// counts it into the spill's corpus statistics, and drops the unit; the
// second reads each back, in document order, just before embedding it,
// its terms as ids of the vocabulary fitted on those statistics. So a
// build holds a unit per worker instead of every unit. Each payload
// carries a CRC-32C: a spill damaged on disk fails the build instead of
// indexing something else.
type unitSpill struct {
	f     *os.File
	w     *bufio.Writer
	end   int64
	refs  []spillRef
	stats *embed.CorpusStats
	ids   []uint32 // put's scratch
	out   []byte   // put's scratch
	buf   []byte   // take's scratch
}

// spillRef is where one unit lies in the spill file.
type spillRef struct {
	off int64
	n   int
	sum uint32
}

// spillBuffer is the spill's write buffer.
const spillBuffer = 1 << 20

// newUnitSpill creates an empty spill for n units in dir, counting them
// into stats; close removes it.
func newUnitSpill(dir string, n int, stats *embed.CorpusStats) (*unitSpill, error) {
	f, err := os.CreateTemp(dir, ".units-*.spill")
	if err != nil {
		return nil, fmt.Errorf("creating unit spill: %w", err)
	}
	return &unitSpill{f: f, w: bufio.NewWriterSize(f, spillBuffer), refs: make([]spillRef, n), stats: stats}, nil
}

// put counts the i-th unit u into the spill's statistics and appends it:
// split, the split field of its payload, then its analyses as term ids.
func (s *unitSpill) put(i int, u *Unit, split []byte) error {
	s.out = spillAnalyses(append(s.out[:0], split...), u, s.stats, &s.ids)
	payload := s.out
	if _, err := s.w.Write(payload); err != nil {
		return fmt.Errorf("writing unit spill: %w", err)
	}
	s.refs[i] = spillRef{off: s.end, n: len(payload), sum: crc32.Checksum(payload, castagnoli)}
	s.end += int64(len(payload))
	return nil
}

// finish flushes what put wrote, so that take can read it.
func (s *unitSpill) finish() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("writing unit spill: %w", err)
	}
	return nil
}

// errDamagedSpill reports a spilled unit that does not read back whole.
var errDamagedSpill = errors.New("damaged unit spill")

// take reads the i-th unit back, whole (its analyses decoded as ids of
// the vocabulary fitted on the spill's statistics, nothing packed),
// holding none of the spill's buffer.
func (s *unitSpill) take(i int) (*Unit, error) {
	ref := s.refs[i]
	if cap(s.buf) < ref.n {
		s.buf = make([]byte, ref.n)
	}
	payload := s.buf[:ref.n]
	if _, err := s.f.ReadAt(payload, ref.off); err != nil {
		return nil, fmt.Errorf("reading unit spill: %w", err)
	}
	if crc32.Checksum(payload, castagnoli) != ref.sum {
		return nil, errDamagedSpill
	}
	u, err := decodeSpilled(payload, s.stats)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errDamagedSpill, err)
	}
	return u, nil
}

// close closes and removes the spill file.
func (s *unitSpill) close() {
	s.f.Close()
	os.Remove(s.f.Name())
}
