package embedded

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// expiringContext reports no error for its first `after` calls to Err and
// context.DeadlineExceeded from then on: a deadline that passes while a
// search is under way, at a point the test chooses.
type expiringContext struct {
	context.Context
	after int64
	calls atomic.Int64
}

func (c *expiringContext) Err() error {
	if c.calls.Add(1) > c.after {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *expiringContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// deadlineStore holds n records that all share term 1 (so one query term
// has n postings) with a dense vector each.
func deadlineStore(t *testing.T, n int, dense bool) *Store {
	t.Helper()
	opts := Options{Metric: index.IP}
	e := mustStore(t, opts)
	recs := make([]index.Record, n)
	for i := range recs {
		v := vector.Vector{Sparse: sp(1, float32(1+i%7), float32(2+i%5), 1)}
		if dense {
			v = vector.Vector{Dense: []float32{float32(i%11) + 1, 1}}
		}
		recs[i] = index.Record{ID: fmt.Sprintf("c%06d", i), ParentID: fmt.Sprintf("p%d", i/4), DocID: "d", Vector: v}
	}
	mustUpsert(t, e, recs...)
	return e
}

// A deadline that passes during the scan of a long posting list stops the
// search with the context's error, and leaves the store answering the next
// search exactly as before, whether the search prunes (one look per
// checkEvery postings: five here, as no record can be pruned) or scans
// exhaustively (five looks accumulating, five collecting).
func TestEmbeddedSparseSearchStopsAtDeadline(t *testing.T) {
	const n = 5 * checkEvery
	e := deadlineStore(t, n, false)
	req := index.SearchRequest{Vector: vector.Vector{Sparse: sp(1, 1, 2, 0.5)}, TopK: 10}
	for _, mode := range []struct {
		exhaustive bool
		looks      []int64
	}{{false, []int64{1, 2, 3, 4}}, {true, []int64{1, 2, 4, 6, 7, 9}}} {
		e.SetExhaustiveSparse(mode.exhaustive)
		want := mustSearch(t, e, req)
		for _, after := range mode.looks {
			ctx := &expiringContext{Context: context.Background(), after: after}
			hits, err := e.Search(ctx, req)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("exhaustive=%v, deadline after %d looks: got %d hits, err %v; want context.DeadlineExceeded", mode.exhaustive, after, len(hits), err)
			}
			// The scan looked at the context every checkEvery postings,
			// not once per search.
			if got := ctx.calls.Load(); got != after+1 {
				t.Errorf("exhaustive=%v, deadline after %d looks: the context was looked at %d times, want %d", mode.exhaustive, after, got, after+1)
			}
			sameHits(t, fmt.Sprintf("search after a deadline at look %d", after), mustSearch(t, e, req), want)
		}
	}
}

// The exact dense scan also stops at the deadline.
func TestEmbeddedDenseScanStopsAtDeadline(t *testing.T) {
	e := deadlineStore(t, 3*checkEvery, true)
	ctx := &expiringContext{Context: context.Background(), after: 1}
	_, err := e.Search(ctx, index.SearchRequest{Vector: vector.Vector{Dense: []float32{1, 1}}, TopK: 5})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
}

// MaxPostings refuses a query whose terms reach more postings than allowed,
// naming both numbers, and lets one within the limit through.
func TestEmbeddedSearchMaxPostings(t *testing.T) {
	e := deadlineStore(t, 100, false)
	q := vector.Vector{Sparse: sp(1, 1, 2, 1)} // 100 + 20 postings
	_, err := e.Search(context.Background(), index.SearchRequest{Vector: q, TopK: 3, MaxPostings: 119})
	if !errors.Is(err, index.ErrQueryTooCostly) {
		t.Fatalf("MaxPostings 119: got %v, want ErrQueryTooCostly", err)
	}
	if msg := err.Error(); !contains(msg, "120 postings") || !contains(msg, "limit of 119") {
		t.Errorf("error %q does not name the postings and the limit", msg)
	}
	hits, err := e.Search(context.Background(), index.SearchRequest{Vector: q, TopK: 3, MaxPostings: 120})
	if err != nil || len(hits) != 3 {
		t.Fatalf("MaxPostings 120: got %d hits, err %v; want 3 hits", len(hits), err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
