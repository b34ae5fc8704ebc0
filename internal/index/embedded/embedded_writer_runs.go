package embedded

import (
	"bufio"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// triple is the fixed-size entry a runSorter sorts: a posting as (term
// index, slot, weight bits), or an id as (hash high, hash low, slot).
type triple [3]uint32

func compareTriples(a, b triple) int {
	if c := cmp.Compare(a[0], b[0]); c != 0 {
		return c
	}
	if c := cmp.Compare(a[1], b[1]); c != 0 {
		return c
	}
	return cmp.Compare(a[2], b[2])
}

// runSorter sorts more triples than fit in memory: it buffers up to limit
// of them, spills each full buffer as a sorted run file in dir, and merges
// the runs when read. Its memory is the buffer plus a read buffer per run
// while merging.
type runSorter struct {
	dir, name string
	limit     int
	buf       []triple
	runs      []string
}

// runReadBuffer is the read buffer of each run while merging.
const runReadBuffer = 64 << 10

func newRunSorter(dir, name string, limit int) *runSorter {
	return &runSorter{dir: dir, name: name, limit: max(limit, 1)}
}

// add buffers t, spilling a run when the buffer is full.
func (s *runSorter) add(t triple) error {
	s.buf = append(s.buf, t)
	if len(s.buf) >= s.limit {
		return s.spill()
	}
	return nil
}

// spill writes the buffer, sorted, as a new run and empties it.
func (s *runSorter) spill() error {
	slices.SortFunc(s.buf, compareTriples)
	f, err := os.Create(filepath.Join(s.dir, fmt.Sprintf("%s-%05d.run", s.name, len(s.runs))))
	if err != nil {
		return fmt.Errorf("spilling a sorted run: %w", err)
	}
	w := newBinWriter(f)
	for _, t := range s.buf {
		w.u32(t[0])
		w.u32(t[1])
		w.u32(t[2])
	}
	w.flush()
	if err := errors.Join(w.err, f.Close()); err != nil {
		return fmt.Errorf("spilling a sorted run: %w", err)
	}
	s.runs = append(s.runs, f.Name())
	s.buf = s.buf[:0]
	return nil
}

// each calls fn with every triple added, in ascending order, stopping at
// the first error fn or ctx returns. It consumes the sorter.
func (s *runSorter) each(ctx context.Context, fn func(triple) error) error {
	if len(s.runs) == 0 {
		slices.SortFunc(s.buf, compareTriples)
		for i, t := range s.buf {
			if err := pollContext(ctx, i); err != nil {
				return err
			}
			if err := fn(t); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.buf) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	m, err := openRuns(s.runs)
	if err != nil {
		return err
	}
	defer m.close()
	heap.Init(m)
	for i := 0; m.Len() > 0; i++ {
		if err := pollContext(ctx, i); err != nil {
			return err
		}
		if err := fn(m.heads[0].t); err != nil {
			return err
		}
		if err := m.advance(); err != nil {
			return err
		}
	}
	return nil
}

// pollContext returns ctx's error every checkEvery items.
func pollContext(ctx context.Context, i int) error {
	if i%checkEvery == 0 {
		return ctx.Err()
	}
	return nil
}

// runHead is the smallest unread triple of one run.
type runHead struct {
	t triple
	r *bufio.Reader
	f *os.File
}

// runMerge is a min-heap of run heads: heads[0] holds the smallest triple
// of all runs.
type runMerge struct{ heads []runHead }

func (m *runMerge) Len() int           { return len(m.heads) }
func (m *runMerge) Less(i, j int) bool { return compareTriples(m.heads[i].t, m.heads[j].t) < 0 }
func (m *runMerge) Swap(i, j int)      { m.heads[i], m.heads[j] = m.heads[j], m.heads[i] }
func (m *runMerge) Push(x any)         { m.heads = append(m.heads, x.(runHead)) }
func (m *runMerge) Pop() any {
	h := m.heads[len(m.heads)-1]
	m.heads = m.heads[:len(m.heads)-1]
	return h
}

// openRuns opens every run and reads its first triple.
func openRuns(paths []string) (*runMerge, error) {
	m := &runMerge{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			m.close()
			return nil, fmt.Errorf("reading a sorted run: %w", err)
		}
		h := runHead{r: bufio.NewReaderSize(f, runReadBuffer), f: f}
		ok, err := readTriple(h.r, &h.t)
		if err != nil || !ok {
			_ = f.Close()
			m.close()
			return nil, fmt.Errorf("reading sorted run %s: empty or unreadable: %v", p, err)
		}
		m.heads = append(m.heads, h)
	}
	return m, nil
}

// advance replaces the smallest head by the next triple of its run, or
// drops the run when it is done.
func (m *runMerge) advance() error {
	h := &m.heads[0]
	ok, err := readTriple(h.r, &h.t)
	if err != nil {
		return fmt.Errorf("reading a sorted run: %w", err)
	}
	if ok {
		heap.Fix(m, 0)
		return nil
	}
	_ = h.f.Close()
	heap.Pop(m)
	return nil
}

func (m *runMerge) close() {
	for _, h := range m.heads {
		_ = h.f.Close()
	}
	m.heads = nil
}

// readTriple reads the next triple; false at the end of the run.
func readTriple(r *bufio.Reader, t *triple) (bool, error) {
	var b [12]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, err
	}
	for i := range t {
		t[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return true, nil
}
