package segment

import (
	"context"
	"fmt"
	"sync"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// Store serves a Set as an index.Searcher (and PostingsCounter):
// searches are Set.Search, each hit named by its child, parent, document
// and ordinal. It is read-only and safe for concurrent use.
type Store struct {
	mu      sync.RWMutex
	set     *Set
	release func() error
	closed  bool
}

// NewStore serves set; release, when not nil, is called once by Close,
// after every search in flight is done (it unmaps the segments' bytes).
func NewStore(set *Set, release func() error) *Store {
	return &Store{set: set, release: release}
}

// Set returns the set the store serves.
func (s *Store) Set() *Set { return s.set }

// Search returns the req.TopK children of highest score for req's sparse
// vector, as the embedded store does: by descending score, ties to the
// smaller id, none of score zero or less; an empty query finds nothing. A
// dense part fails with index.ErrInvalidInput, a query whose terms
// reach more than req.MaxPostings children (when positive) with
// index.ErrQueryTooCostly, and a search after Close with
// index.ErrClosed.
func (s *Store) Search(ctx context.Context, req index.SearchRequest) ([]index.Hit, error) {
	return s.SearchFiltered(ctx, req, nil)
}

// SearchFiltered is Search restricted to the children keep accepts, as
// the embedded store's SearchFiltered is: the best req.TopK among them,
// exactly as if the others were absent. keep sees each hit (child,
// parent, document, ordinal) without its score, and only for children
// that would otherwise enter the result; a nil keep accepts every child.
func (s *Store) SearchFiltered(ctx context.Context, req index.SearchRequest, keep func(index.Hit) bool) ([]index.Hit, error) {
	if len(req.Vector.Dense) > 0 {
		return nil, fmt.Errorf("search: %w: a segment child index holds sparse vectors only", index.ErrInvalidInput)
	}
	if req.TopK <= 0 {
		return nil, fmt.Errorf("search: topk must be positive, got %d: %w", req.TopK, index.ErrInvalidInput)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("search: %w", index.ErrClosed)
	}
	q := req.Vector.Sparse
	if q == nil || len(q.Indices) == 0 {
		return nil, nil
	}
	if req.MaxPostings > 0 { // counted only where a limit asks
		if n := s.set.postings(q); n > req.MaxPostings {
			return nil, fmt.Errorf("search: %w: its terms have %d postings in the index, over the limit of %d", index.ErrQueryTooCostly, n, req.MaxPostings)
		}
	}
	var keepChild func(Hit) bool
	if keep != nil {
		keepChild = func(h Hit) bool { return keep(s.named(h)) }
	}
	hits, err := s.set.SearchFiltered(ctx, q, req.TopK, keepChild)
	if err != nil {
		return nil, fmt.Errorf("search: %w: %w", index.ErrInvalidInput, err)
	}
	out := make([]index.Hit, len(hits))
	for i, h := range hits {
		out[i] = s.named(h)
	}
	return out, nil
}

// named returns h with its parent, document and ordinal.
func (s *Store) named(h Hit) index.Hit {
	seg := s.set.segs[h.Segment]
	p := seg.ParentOf(h.Slot)
	return index.Hit{ID: h.ID, ParentID: seg.ParentID(p), DocID: seg.DocID(p), Ordinal: seg.Ordinal(h.Slot), Score: h.Score}
}

// Postings returns how many children hold v's sparse terms, counted term
// by term as the embedded store counts its postings: a child holds a term
// its text or its parent's context holds. 0 after Close.
func (s *Store) Postings(v vector.Vector) int {
	if v.Sparse == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0
	}
	return s.set.postings(v.Sparse)
}

// Count returns the number of children.
func (s *Store) Count(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, fmt.Errorf("count: %w", index.ErrClosed)
	}
	return s.set.Children(), nil
}

// Close waits for the searches in flight, then releases the segments'
// bytes; later calls fail with index.ErrClosed. Closing twice is a
// no-op.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.release == nil {
		return nil
	}
	return s.release()
}
