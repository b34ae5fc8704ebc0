package embedded

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// postingRuns holds the postings a FileWriter has taken, grouped by term
// index, in bounded memory. Postings arrive in slot order, so each term's
// postings already arrive in list order: nothing is ever sorted by slot.
// It buffers up to limit postings with their term indices and, when full,
// spills them as a run: the buffered terms in ascending index, each as a
// (term, postings, bytes) header and its postings in arrival order as
// entries (embedded_writer_entries.go): about 40% of their size for
// children that carry a context.
// Reading merges the runs term by term, each term's pieces run after run.
//
// Its memory is the buffer (16 bytes a posting: term, posting, and the
// posting again while spilling), the entries of one term of a run (up to
// 9 bytes a posting), 4 bytes per distinct term, and a read buffer per
// run while merging.
type postingRuns struct {
	dir     string
	limit   int
	terms   []uint32  // term index of each buffered posting
	list    []posting // buffered postings, in arrival order
	perTerm []uint32  // buffered postings of each term index; a start offset while spilling
	present []uint32  // term indices with a buffered posting
	sorted  []posting // the spill's output buffer
	entries []byte    // one term's entries, while spilling and merging
	runs    []string
}

func newPostingRuns(dir string, limit int) *postingRuns {
	return &postingRuns{dir: dir, limit: max(limit, 1)}
}

// add buffers posting p of term index t, spilling a run when the buffer
// is full. Calls must come in slot order.
func (s *postingRuns) add(t uint32, p posting) error {
	if int(t) >= len(s.perTerm) {
		s.perTerm = append(s.perTerm, make([]uint32, int(t)+1-len(s.perTerm))...)
	}
	if s.perTerm[t] == 0 {
		s.present = append(s.present, t)
	}
	s.perTerm[t]++
	s.terms = append(s.terms, t)
	s.list = append(s.list, p)
	if len(s.list) >= s.limit {
		return s.spill()
	}
	return nil
}

// spill writes the buffered postings as a new run, grouped by ascending
// term index and in arrival order within a term, and empties the buffer.
func (s *postingRuns) spill() error {
	if len(s.list) == 0 {
		return nil
	}
	slices.Sort(s.present)
	start := uint32(0)
	for _, t := range s.present {
		start, s.perTerm[t] = start+s.perTerm[t], start
	}
	s.sorted = slices.Grow(s.sorted[:0], len(s.list))[:len(s.list)]
	for i, t := range s.terms {
		s.sorted[s.perTerm[t]] = s.list[i]
		s.perTerm[t]++
	}
	err := s.writeRun()
	for _, t := range s.present {
		s.perTerm[t] = 0
	}
	s.terms, s.list, s.present = s.terms[:0], s.list[:0], s.present[:0]
	return err
}

// writeRun writes the grouped postings of the spill in progress, whose
// perTerm holds each present term's end offset in sorted.
func (s *postingRuns) writeRun() error {
	f, err := os.Create(filepath.Join(s.dir, fmt.Sprintf("postings-%05d.run", len(s.runs))))
	if err != nil {
		return fmt.Errorf("spilling postings: %w", err)
	}
	w := newBinWriter(f)
	start := uint32(0)
	for _, t := range s.present {
		end := s.perTerm[t]
		s.entries = appendEntries(s.entries[:0], s.sorted[start:end])
		w.u32(t)
		w.u32(end - start)
		w.u32(uint32(len(s.entries)))
		w.raw(s.entries)
		start = end
	}
	w.flush()
	if err := errors.Join(w.err, f.Close()); err != nil {
		return fmt.Errorf("spilling postings: %w", err)
	}
	s.runs = append(s.runs, f.Name())
	return nil
}

// postingRun is one run being read: the header of its next group.
type postingRun struct {
	r                  *bufio.Reader
	f                  *os.File
	term, count, bytes uint32
	done               bool
}

// next reads the header of the run's next group, or marks it done.
func (r *postingRun) next() error {
	var b [12]byte
	if _, err := io.ReadFull(r.r, b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			r.done = true
			return nil
		}
		return fmt.Errorf("reading spilled postings: %w", err)
	}
	r.term, r.count, r.bytes = binary.LittleEndian.Uint32(b[:]), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
	return nil
}

// copyGroup writes the postings of the run's current group to out,
// extending the list e expands, and reads the next header; buf is scratch
// for the group's entries, returned for reuse.
func (r *postingRun) copyGroup(out *binWriter, e *entryExpander, buf []byte) ([]byte, error) {
	buf = slices.Grow(buf[:0], int(r.bytes))[:r.bytes]
	if _, err := io.ReadFull(r.r, buf); err != nil {
		return buf, fmt.Errorf("reading spilled postings: %w", err)
	}
	if err := e.expand(buf, int(r.count), func(p []posting) { writeArray(out, p) }); err != nil {
		return buf, err
	}
	return buf, r.next()
}

// each writes every posting to out, grouped by term index from 0 to
// terms-1 (each index must have a posting), each list in slot order, and
// calls lists with the block maxima of each list in turn. It spills what
// is still buffered and consumes the runs.
func (s *postingRuns) each(ctx context.Context, out *binWriter, terms int, lists func(maxima []float32)) error {
	if err := s.spill(); err != nil {
		return err
	}
	runs, err := openPostingRuns(s.runs)
	defer closePostingRuns(runs)
	if err != nil {
		return err
	}
	var e entryExpander
	for t := range uint32(terms) {
		if err := pollContext(ctx, int(t)); err != nil {
			return err
		}
		e.reset()
		for _, r := range runs {
			if r.done || r.term != t {
				continue
			}
			if s.entries, err = r.copyGroup(out, &e, s.entries); err != nil {
				return err
			}
		}
		if e.n == 0 {
			return fmt.Errorf("spilled postings: term %d has none", t)
		}
		lists(e.maxima)
	}
	return out.err
}

// openPostingRuns opens every run and reads its first group header.
func openPostingRuns(paths []string) ([]*postingRun, error) {
	runs := make([]*postingRun, 0, len(paths))
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return runs, fmt.Errorf("reading spilled postings: %w", err)
		}
		r := &postingRun{r: bufio.NewReaderSize(f, runReadBuffer), f: f}
		runs = append(runs, r)
		if err := r.next(); err != nil {
			return runs, err
		}
	}
	return runs, nil
}

func closePostingRuns(runs []*postingRun) {
	for _, r := range runs {
		_ = r.f.Close()
	}
}
