package indexer

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/parentrag/parentrag/internal/index/bm25"
)

// unitSpill is the file a streaming build keeps its units in between its
// two passes: the first pass appends each unit (see spillAnalyses), which
// counts it into the spill's corpus statistics, and drops the unit; the
// second reads each back, in document order, just before embedding it,
// its terms as ids of the vocabulary fitted on those statistics. So a
// build holds a unit per worker instead of every unit. Each unit carries
// a CRC-32C: a spill damaged on disk fails the build instead of indexing
// something else. A build with a unit cache spills into the cache's
// directory and keeps the spill as its scope's next pack (see persist and
// unitPack).
type unitSpill struct {
	f         *os.File
	w         *bufio.Writer
	end       int64
	refs      []spillRef
	stats     *bm25.CorpusStats
	ids       []uint32 // put's scratch
	out       []byte   // put's scratch
	buf       []byte   // take's scratch
	persisted bool
}

// spillRef is where one unit lies in the spill file and, for a pack, its
// key (zero without a unit cache) and how many parents and children it
// holds.
type spillRef struct {
	off               int64
	n                 int
	sum               uint32
	key               unitKey
	parents, children int
}

// spillSink is what the writes of a spill go to: its file (a test fails
// them, as a full disk does).
var spillSink = func(f *os.File) io.Writer { return f }

// spillBuffer is the spill's write buffer.
const spillBuffer = 1 << 20

// newUnitSpill creates an empty spill for n units in dir, named after
// pattern (see os.CreateTemp), counting them into stats; close removes it
// unless persisted.
func newUnitSpill(dir, pattern string, n int, stats *bm25.CorpusStats) (*unitSpill, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("creating unit spill: %w", err)
	}
	s := &unitSpill{f: f, w: bufio.NewWriterSize(spillSink(f), spillBuffer), refs: make([]spillRef, n), stats: stats}
	s.w.WriteString(packMagic) // a spill is a pack but for its footer
	s.end = int64(len(packMagic))
	return s, nil
}

// put counts the i-th unit u, whose key is key, into the spill's
// statistics and appends it: split, the split field of its payload, then
// its analyses as term ids.
func (s *unitSpill) put(i int, key unitKey, u *Unit, split []byte) error {
	s.out = spillAnalyses(s.out[:0], u, s.stats, &s.ids)
	return s.putSpilled(i, spillRef{key: key, parents: u.stored(), children: len(u.Children)}, split, s.out)
}

// putSpilled appends the i-th unit spilled, as head then rest (nil for a
// unit in one piece), described by ref but for where it lies: a unit put
// made, or one an earlier build spilled with the ids of the spill's
// statistics, already counted (see spilledCounts).
func (s *unitSpill) putSpilled(i int, ref spillRef, head, rest []byte) error {
	ref.off, ref.n, ref.sum = s.end, 0, 0
	for _, part := range [2][]byte{head, rest} {
		if _, err := s.w.Write(part); err != nil {
			return fmt.Errorf("writing unit spill: %w", err)
		}
		ref.n += len(part)
		ref.sum = crc32.Update(ref.sum, castagnoli, part)
	}
	s.refs[i] = ref
	s.end += int64(ref.n)
	return nil
}

// finish flushes what put wrote, so that take can read it.
func (s *unitSpill) finish() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("writing unit spill: %w", err)
	}
	return nil
}

// persist finishes the spill and keeps it, with its footer, as the pack
// at path. It fails only when the spill cannot be read back (finish's
// error, which fails the build); failing to write the footer or rename
// the file leaves the spill readable and is returned as storeErr.
func (s *unitSpill) persist(path string) (storeErr, err error) {
	if err := s.finish(); err != nil {
		return nil, err
	}
	footer := encodePackFooter(s.stats.Terms(), s.refs, s.end)
	if _, err := s.f.WriteAt(footer, s.end); err != nil {
		return fmt.Errorf("unit cache: writing %s: %w", path, err), nil
	}
	if err := os.Rename(s.f.Name(), path); err != nil {
		return fmt.Errorf("unit cache: %w", err), nil
	}
	s.persisted = true
	return nil, nil
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

// close closes the spill file and removes it, unless it was persisted.
func (s *unitSpill) close() {
	s.f.Close()
	if !s.persisted {
		os.Remove(s.f.Name())
	}
}
