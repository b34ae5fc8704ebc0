package vectorstore

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// postingRuns holds the postings a FileWriter has taken, grouped by term
// index, in bounded memory. Postings arrive in slot order, so each term's
// postings already arrive in list order: nothing is ever sorted by slot.
// It buffers up to limit postings with their term indices and, when full,
// spills them as a run: the buffered terms in ascending index, each as a
// (term, count) header and its postings in arrival order. Reading merges
// the runs term by term, each term's pieces run after run, copying bytes.
//
// Its memory is the buffer (16 bytes a posting: term, posting, and the
// posting again while spilling), 4 bytes per distinct term, and a read
// buffer per run while merging.
type postingRuns struct {
	dir     string
	limit   int
	terms   []uint32  // term index of each buffered posting
	list    []posting // buffered postings, in arrival order
	perTerm []uint32  // buffered postings of each term index; a start offset while spilling
	present []uint32  // term indices with a buffered posting
	sorted  []posting // the spill's output buffer
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
		w.u32(t)
		w.u32(end - start)
		writeArray(w, s.sorted[start:end])
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
	r           *bufio.Reader
	f           *os.File
	term, count uint32
	done        bool
}

// next reads the header of the run's next group, or marks it done.
func (r *postingRun) next() error {
	var b [8]byte
	if _, err := io.ReadFull(r.r, b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			r.done = true
			return nil
		}
		return fmt.Errorf("reading spilled postings: %w", err)
	}
	r.term, r.count = binary.LittleEndian.Uint32(b[:]), binary.LittleEndian.Uint32(b[4:])
	return nil
}

// copyGroup appends the postings of the run's current group to out and
// their weights to the block maxima of a list that already had n, and
// returns the list's new length and maxima.
func (r *postingRun) copyGroup(out *binWriter, n int, maxima []float32) (int, []float32, error) {
	for left := 8 * int(r.count); left > 0; {
		b, err := r.r.Peek(min(left, r.r.Size()))
		if err != nil {
			return n, maxima, fmt.Errorf("reading spilled postings: %w", err)
		}
		out.raw(b)
		n, maxima = appendBlockMaxima(maxima, n, b)
		_, _ = r.r.Discard(len(b))
		left -= len(b)
	}
	return n, maxima, r.next()
}

// appendBlockMaxima extends the block maxima of a list of n postings, as
// appendBlockMax does, by the encoded postings b, and returns the list's
// new length and maxima. Weights are finite, and the magnitudes of finite
// floats order as their bits with the sign cleared, so it compares bits.
func appendBlockMaxima(maxima []float32, n int, b []byte) (int, []float32) {
	const magnitude = 1<<31 - 1
	for i := 4; i < len(b); i += 8 {
		bits := binary.LittleEndian.Uint32(b[i:]) & magnitude
		if n%blockSize == 0 {
			maxima = append(maxima, math.Float32frombits(bits))
		} else if last := &maxima[len(maxima)-1]; bits > math.Float32bits(*last) {
			*last = math.Float32frombits(bits)
		}
		n++
	}
	return n, maxima
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
	var maxima []float32
	for t := range uint32(terms) {
		if err := pollContext(ctx, int(t)); err != nil {
			return err
		}
		n := 0
		maxima = maxima[:0]
		for _, r := range runs {
			if r.done || r.term != t {
				continue
			}
			if n, maxima, err = r.copyGroup(out, n, maxima); err != nil {
				return err
			}
		}
		if n == 0 {
			return fmt.Errorf("spilled postings: term %d has none", t)
		}
		lists(maxima)
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
