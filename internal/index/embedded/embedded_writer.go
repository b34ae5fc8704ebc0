package embedded

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"sync"

	"github.com/parentrag/parentrag/internal/filesum"
	"github.com/parentrag/parentrag/internal/index"
)

// FileWriter writes the file Embedded.Save writes for the same records,
// without holding them: record columns and dense rows stream to temporary
// files, postings are spilled as runs grouped by term (they arrive in slot
// order, so nothing is sorted by slot), and Finish merges them into
// dir/File. Its memory is a constant (the posting and id buffers,
// about 16 MiB, 256 KiB per column, and an index of term ids below 2^20 of
// at most 4 MiB) plus the batch being upserted, plus the term table (about
// 16 bytes per distinct term) and the interned parent and document ids
// (their bytes and about 12 more each); it does not grow with the number
// of children. Temporary files, about 8 bytes per posting, 12 per id, plus
// the final file's size, live in a directory inside dir until Finish or
// Close.
//
// Records must arrive with distinct ids (the indexer assigns each child one
// slot, in order); a repeated id is reported by Finish. It is an
// index.Writer, not a Searcher: load the finished file to search.
// FileWriter is safe for concurrent use, calls serialize.
type FileWriter struct {
	mu    sync.Mutex
	dir   string
	spill string
	opts  Options
	seed  maphash.Seed

	records int
	idBytes uint64
	dims    int
	rows    uint64
	syms    strTable
	terms   termTable
	keys    []uint32
	counts  []uint32
	total   uint64 // postings
	cols    writerColumns
	ids     *runSorter
	posts   *postingRuns
	row     flatIndex   // scratch for one dense row as the store keeps it
	state   error       // non-nil once the writer is finished, closed or broken
	written filesum.Sum // the finished file's, set by Finish
}

var _ index.Writer = (*FileWriter)(nil)

// writerRunLimit is how many postings (16 bytes each while buffered and
// spilled) and ids (12 bytes each) the writer buffers before spilling a run.
const writerRunLimit = 1 << 19

// NewFileWriter starts a file for a store with opts in dir (created if
// needed); nothing replaces dir/File before Finish. It fails when
// opts.Metric is invalid or the spill directory cannot be created.
func NewFileWriter(dir string, opts Options) (*FileWriter, error) {
	return newFileWriter(dir, opts, writerRunLimit)
}

func newFileWriter(dir string, opts Options, runLimit int) (*FileWriter, error) {
	if !opts.Metric.Valid() {
		return nil, fmt.Errorf("new file writer: %v: %w", opts.Metric, index.ErrInvalidInput)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("new file writer: %w", err)
	}
	spill, err := os.MkdirTemp(dir, ".vectors-spill-*")
	if err != nil {
		return nil, fmt.Errorf("new file writer: %w", err)
	}
	w := &FileWriter{
		dir: dir, spill: spill, opts: opts.withDefaults(), seed: maphash.MakeSeed(),
		syms: newStrTable(), terms: termTable{far: map[uint32]uint32{}},
		ids: newRunSorter(spill, "ids", runLimit), posts: newPostingRuns(spill, runLimit),
	}
	if err := w.cols.open(spill); err != nil {
		_ = os.RemoveAll(spill)
		return nil, fmt.Errorf("new file writer: %w", err)
	}
	return w, nil
}

// Upsert appends records, which take the next slots in order. The batch is
// validated first (as Embedded.Upsert validates it) and nothing is written
// if any record is invalid; a failure to write the temporary files breaks
// the writer, and every later call returns that error.
func (w *FileWriter) Upsert(ctx context.Context, records []index.Record) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	dims, err := checkRecords(records)
	if err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != nil {
		return fmt.Errorf("upsert: %w", w.state)
	}
	if dims != 0 && w.dims != 0 && dims != w.dims {
		return fmt.Errorf("upsert: dense vectors have %d dims, store has %d: %w", dims, w.dims, index.ErrDimensionMismatch)
	}
	if err := w.checkCapacity(records); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	if dims != 0 {
		w.dims = dims
	}
	for i := range records {
		if err := w.append(&records[i]); err != nil {
			w.state = fmt.Errorf("writing temporary files: %w", err)
			return fmt.Errorf("upsert: %w", w.state)
		}
	}
	return nil
}

// checkCapacity fails when the batch would overflow the 4 GiB arenas or
// 2^32 slots, as recordTable.checkCapacity does for a store.
func (w *FileWriter) checkCapacity(records []index.Record) error {
	idBytes, symBytes := w.idBytes, uint64(len(w.syms.arena))
	for i := range records {
		idBytes += uint64(len(records[i].ID))
		symBytes += uint64(len(records[i].ParentID) + len(records[i].DocID))
	}
	if idBytes > maxArena || symBytes > maxArena || uint64(w.records+len(records)) >= maxArena {
		return fmt.Errorf("store would exceed 4 GiB of ids or 2^32 slots: %w", index.ErrInvalidInput)
	}
	return nil
}

// append writes r to the columns and runs as the next slot, storing what
// Embedded.insert stores.
func (w *FileWriter) append(r *index.Record) error {
	slot := uint32(w.records)
	w.records++
	w.idBytes += uint64(len(r.ID))
	w.cols.idEnds.w.u32(uint32(w.idBytes))
	w.cols.idArena.w.raw([]byte(r.ID))
	w.cols.parent.w.u32(w.syms.intern(r.ParentID))
	w.cols.doc.w.u32(w.syms.intern(r.DocID))
	w.cols.ordinal.w.u32(uint32(int32(r.Ordinal)))
	h := maphash.String(w.seed, r.ID)
	if err := w.ids.add(triple{uint32(h >> 32), uint32(h), slot}); err != nil {
		return err
	}
	if s := r.Vector.Sparse; s != nil {
		for i, t := range s.Indices {
			if s.Values[i] == 0 {
				continue // as invertedIndex.add: zero adds nothing
			}
			if err := w.posts.add(w.term(t), posting{slot, s.Values[i]}); err != nil {
				return err
			}
		}
	}
	if len(r.Vector.Dense) > 0 {
		w.row.data, w.row.owner = w.row.data[:0], w.row.owner[:0]
		w.row.add(slot, r.Vector.Dense, w.opts.Metric)
		w.cols.owner.w.u32(slot)
		writeArray(w.cols.dense.w, w.row.data)
		w.rows++
	}
	return w.cols.err()
}

// term returns the index of term id t in the term table, adding it in
// order of first appearance, and counts one posting for it.
func (w *FileWriter) term(t uint32) uint32 {
	li, ok := w.terms.get(t)
	if !ok {
		li = uint32(len(w.keys))
		w.terms.set(t, li)
		w.keys = append(w.keys, t)
		w.counts = append(w.counts, 0)
	}
	w.counts[li]++
	w.total++
	return li
}

// termTable maps term ids to their index in the writer's term table: ids
// below nearTerms in a slice indexed by id (lexical embedders number their
// vocabulary from 0), any other in a map.
type termTable struct {
	near []uint32 // index+1 of term id i; 0 when absent
	far  map[uint32]uint32
}

// nearTerms bounds the slice of a termTable (4 bytes an id, 4 MiB at most).
const nearTerms = 1 << 20

func (tt *termTable) get(t uint32) (uint32, bool) {
	if t < nearTerms {
		if int(t) < len(tt.near) && tt.near[t] != 0 {
			return tt.near[t] - 1, true
		}
		return 0, false
	}
	li, ok := tt.far[t]
	return li, ok
}

func (tt *termTable) set(t, li uint32) {
	if t >= nearTerms {
		tt.far[t] = li
		return
	}
	if int(t) >= len(tt.near) {
		tt.near = append(tt.near, make([]uint32, int(t)+1-len(tt.near))...)
	}
	tt.near[t] = li + 1
}

// Count returns the number of records upserted so far.
func (w *FileWriter) Count(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.records, nil
}

// Close abandons an unfinished file and removes the temporary files; after
// Finish it does nothing. Later calls fail.
func (w *FileWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == nil {
		w.state = errors.New("the file writer is closed")
	}
	return w.cleanUp()
}

// cleanUp closes the columns and removes the spill directory.
func (w *FileWriter) cleanUp() error {
	err := w.cols.close()
	if w.spill != "" {
		err = errors.Join(err, os.RemoveAll(w.spill))
		w.spill = ""
	}
	return err
}
