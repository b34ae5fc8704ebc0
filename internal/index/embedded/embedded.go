package embedded

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// ErrCorruptFile reports a persisted store that is truncated, fails its
// checksum, or is otherwise not a file Load can trust.
var ErrCorruptFile = errors.New("corrupt vector store file")

// Defaults applied by New to zero HNSW fields.
const (
	// DefaultHNSWThreshold is the live dense vector count above which an
	// enabled HNSW index replaces flat search.
	DefaultHNSWThreshold = 20000
	// DefaultHNSWM is the HNSW out-degree per layer (twice that on layer 0).
	DefaultHNSWM = 16
	// DefaultHNSWEfConstruction is the HNSW beam width while inserting.
	DefaultHNSWEfConstruction = 100
	// DefaultHNSWEfSearch is the HNSW beam width while searching; a search
	// always uses at least TopK.
	DefaultHNSWEfSearch = 64
)

// Options configures New. The zero value is an exact store
// (flat dense search, inner product metric).
type Options struct {
	// Metric scores dense vectors. Sparse vectors are always scored by
	// inner product.
	Metric index.Metric
	// HNSW enables the approximate dense index. Once the store holds more
	// than HNSWThreshold dense rows (tombstoned rows awaiting compaction
	// included), dense search walks the HNSW graph instead of scanning every
	// vector; below that, search stays exact. The graph is built in full by
	// the write that crosses the threshold, rebuilt by every compaction and
	// by Load (it is not persisted), and extended by later upserts;
	// all of this runs under the write lock. Recall is high but not
	// guaranteed, and a result can hold fewer than TopK hits when many
	// near neighbours are tombstones.
	HNSW bool
	// HNSWThreshold, HNSWM, HNSWEfConstruction and HNSWEfSearch tune the
	// HNSW index; zero picks the Default constants.
	HNSWThreshold      int
	HNSWM              int
	HNSWEfConstruction int
	HNSWEfSearch       int
}

func (o Options) withDefaults() Options {
	if o.HNSWThreshold <= 0 {
		o.HNSWThreshold = DefaultHNSWThreshold
	}
	if o.HNSWM <= 1 {
		o.HNSWM = DefaultHNSWM
	}
	if o.HNSWEfConstruction <= 0 {
		o.HNSWEfConstruction = DefaultHNSWEfConstruction
	}
	if o.HNSWEfSearch <= 0 {
		o.HNSWEfSearch = DefaultHNSWEfSearch
	}
	return o
}

// Embedded is the in-process VectorStore. Sparse search is an exact inverted
// index scored by inner product; dense search is an exact flat scan under
// the configured Metric, or HNSW when enabled and large enough. Any number of
// Search, Count, Stats and Save calls may run concurrently with each other
// and with one writer (Upsert, Delete); writers serialize. A store from
// Load may view a mapped file; Close releases it once no search
// uses it.
type Store struct {
	mu     sync.RWMutex
	opts   Options
	recs   recordTable
	sparse invertedIndex
	dense  flatIndex
	graph  *hnswGraph
	accs   sync.Pool // *accumulator

	mapping *fileMapping // the file the columns view, nil when they are on the heap
	closed  bool

	exhaustiveSparse atomic.Bool  // see SetExhaustiveSparse
	prunePath        atomic.Int32 // anyPath, or windowedOnly to compare paths in tests
	sparseSearches   atomic.Int64 // sparse searches answered
	postingsVisited  atomic.Int64 // postings those searches looked at
}

var (
	_ index.Searcher = (*Store)(nil)
	_ index.Writer   = (*Store)(nil)
)

// New returns an empty store. It fails only when opts.Metric is not
// one of IP, Cosine or L2.
func New(opts Options) (*Store, error) {
	if !opts.Metric.Valid() {
		return nil, fmt.Errorf("new embedded store: %v: %w", opts.Metric, index.ErrInvalidInput)
	}
	e := &Store{opts: opts.withDefaults()}
	e.recs = newRecordTable()
	e.sparse = newInvertedIndex()
	return e, nil
}

// Metric returns the dense metric fixed at construction.
func (e *Store) Metric() index.Metric { return e.opts.Metric }

// Upsert inserts records, replacing any live record with the same ID (the
// last one wins within a batch). The batch is validated first and applied
// only if every record is valid, so an error leaves the store unchanged.
// The first dense vector ever accepted fixes the dense dimension; a later
// mismatch fails with ErrDimensionMismatch.
func (e *Store) Upsert(ctx context.Context, records []index.Record) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	dims, err := checkRecords(records)
	if err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.writable(); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	if dims != 0 && e.dense.dims != 0 && dims != e.dense.dims {
		return fmt.Errorf("upsert: dense vectors have %d dims, store has %d: %w",
			dims, e.dense.dims, index.ErrDimensionMismatch)
	}
	if err := e.recs.checkCapacity(records); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	if dims != 0 && e.dense.dims == 0 {
		e.dense.dims = dims
	}
	for i := range records {
		e.insert(&records[i])
	}
	e.afterWrite()
	return nil
}

// insert appends r as a new slot and tombstones the slot it replaces.
func (e *Store) insert(r *index.Record) {
	slot, old, replaced := e.recs.add(r)
	if replaced {
		e.recs.kill(old)
	}
	if r.Vector.Sparse != nil {
		e.sparse.add(slot, r.Vector.Sparse)
	}
	if len(r.Vector.Dense) > 0 {
		row := e.dense.add(slot, r.Vector.Dense, e.opts.Metric)
		if e.graph != nil {
			e.graph.insert(row)
		}
	}
}

// Delete removes the records with the given ids; unknown ids are ignored,
// so Delete is idempotent. A deleted record is never returned by Search.
func (e *Store) Delete(ctx context.Context, ids []string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.writable(); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	for _, id := range ids {
		e.recs.remove(id)
	}
	e.afterWrite()
	return nil
}

// afterWrite compacts once tombstones exceed a quarter of all slots, which
// bounds postings and dense rows to 4/3 of the live data, and builds the HNSW
// graph once the store crosses the threshold.
func (e *Store) afterWrite() {
	if e.recs.dead*4 > e.recs.slots() {
		e.compact()
	}
	if e.graph == nil && e.wantGraph() {
		e.buildGraph()
	}
}

// Count returns the number of live records.
func (e *Store) Count(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if err := e.checkOpen(); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return e.recs.live(), nil
}

// Search returns at most req.TopK live records by descending score, ties
// broken by ascending ID. A sparse query scores every record by the exact
// sparse inner product (vector.Sparse.Dot) and returns only records scoring
// above zero; dynamic pruning skips records that provably cannot enter the
// result, without changing it. A dense query scores records that have a dense vector by the
// store's Metric, exactly unless the HNSW index is active. A query with
// neither part (or an empty sparse part) returns no hits; one with both
// parts, a non-positive TopK or malformed values fails with
// ErrInvalidInput; a dense query of the wrong length fails with
// ErrDimensionMismatch. Records whose score is NaN are never returned.
func (e *Store) Search(ctx context.Context, req index.SearchRequest) ([]index.Hit, error) {
	return e.search(ctx, req, nil)
}

// search is Search restricted to the slots keep accepts (all when nil).
func (e *Store) search(ctx context.Context, req index.SearchRequest, keep func(uint32) bool) ([]index.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	sparse, dense, err := checkQuery(req)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if err := e.checkOpen(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	h := newTopK(req.TopK, &e.recs)
	h.keep = keep
	switch {
	case sparse != nil:
		err = e.searchSparse(ctx, sparse, req.MaxPostings, h)
	case dense != nil:
		err = e.searchDense(ctx, dense, h)
	}
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return e.hits(h.sorted()), nil
}

// Postings implements PostingsCounter.
func (e *Store) Postings(v vector.Vector) int {
	if v.Sparse == nil {
		return 0
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return postings(e.sparse.queryLists(v.Sparse))
}

// searchSparse scores the records q's terms reach, refusing a query whose
// terms have more than maxPostings postings (when positive) before
// scanning any.
func (e *Store) searchSparse(ctx context.Context, q *vector.Sparse, maxPostings int, h *topK) error {
	lists := e.sparse.queryLists(q)
	if n := postings(lists); maxPostings > 0 && n > maxPostings {
		return fmt.Errorf("%w: its terms have %d postings in the index, over the limit of %d", index.ErrQueryTooCostly, n, maxPostings)
	}
	visited, err := e.rankSparse(ctx, lists, h)
	e.sparseSearches.Add(1)
	e.postingsVisited.Add(int64(visited))
	return err
}

func (e *Store) searchDense(ctx context.Context, q []float32, h *topK) error {
	if e.dense.dims == 0 {
		return nil
	}
	if len(q) != e.dense.dims {
		return fmt.Errorf("dense query has %d dims, store has %d: %w",
			len(q), e.dense.dims, index.ErrDimensionMismatch)
	}
	if e.opts.Metric == index.Cosine {
		q = normalized(q)
		if q == nil {
			return nil
		}
	}
	if e.graph != nil {
		e.graph.search(q, h, e.opts.HNSWEfSearch)
		return nil
	}
	return e.dense.scan(ctx, q, e.opts.Metric, h)
}

func (e *Store) getAccumulator(slots int) *accumulator {
	acc, _ := e.accs.Get().(*accumulator)
	if acc == nil {
		acc = &accumulator{}
	}
	if len(acc.scores) < slots {
		// Grow with headroom so a store that keeps growing does not
		// reallocate on every search.
		acc.scores = make([]float32, slots+slots/8)
	}
	return acc
}

func (e *Store) hits(cands []candidate) []index.Hit {
	out := make([]index.Hit, len(cands))
	for i, c := range cands {
		out[i] = e.recs.hit(c.slot, c.score)
	}
	return out
}

// Stats describes the store's size. Counts are exact; MemoryBytes
// is an estimate of the heap the index structures hold (capacity included,
// Go map overhead approximated). It excludes per-search scratch: each
// concurrent sparse search pools 4 bytes per slot plus its touched list.
type Stats struct {
	// Records is the number of live records, as Count returns.
	Records int
	// Tombstones is the number of deleted or replaced slots awaiting
	// compaction; they never appear in results.
	Tombstones int
	// Terms is the number of distinct sparse term ids indexed.
	Terms int
	// Postings is the number of sparse postings held, tombstoned ones
	// included.
	Postings int
	// DenseDims is the dense dimension, 0 until a dense vector is stored.
	DenseDims int
	// DenseVectors is the number of dense rows held, tombstoned ones
	// included.
	DenseVectors int
	// HNSW reports whether dense search currently uses the HNSW graph.
	HNSW bool
	// MemoryBytes estimates the heap held by the store.
	MemoryBytes int64
	// MappedBytes is how much of the store is read from its mapped file
	// (page cache) rather than held on the heap; 0 unless Mapped.
	MappedBytes int64
}

// BytesPerRecord is MemoryBytes divided by Records (0 when empty).
func (s Stats) BytesPerRecord() float64 {
	if s.Records == 0 {
		return 0
	}
	return float64(s.MemoryBytes) / float64(s.Records)
}

// Stats returns a consistent snapshot of the store's counts and an estimate
// of its memory.
func (e *Store) Stats() Stats {
	e.mu.RLock()
	defer e.mu.RUnlock()
	mapped := e.mappedBytes()
	mem := e.recs.memory() + e.sparse.memory() + e.dense.memory() - mapped
	if e.graph != nil {
		mem += e.graph.memory()
	}
	return Stats{
		Records:      e.recs.live(),
		Tombstones:   e.recs.dead,
		Terms:        len(e.sparse.lists),
		Postings:     e.sparse.total,
		DenseDims:    e.dense.dims,
		DenseVectors: e.dense.rows(),
		HNSW:         e.graph != nil,
		MemoryBytes:  mem,
		MappedBytes:  mapped,
	}
}

// normalized returns v scaled to unit length, or nil when v is zero.
func normalized(v []float32) []float32 {
	n := norm(v)
	if n == 0 {
		return nil
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
