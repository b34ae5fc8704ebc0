package server

import (
	"context"
	"errors"
	"strings"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
)

// Filter restricts a retrieval to parents that match every field given.
//
// It is applied to the children searched, before they are grouped into
// parents: the filtered search over-fetches children (doubling, as the
// unfiltered one does) until it has as many matching children as asked or
// has examined MaxFilterScan children. So maxParents, aggregation and budget
// behave exactly as over an index holding only the matching parents, with
// one limitation: matching children ranked below the first MaxFilterScan
// hits of the whole index are not found, and a very selective filter may
// return fewer parents than exist.
type Filter struct {
	// DocID keeps parents of exactly this document.
	DocID string `json:"docId,omitempty"`
	// DocIDPrefix keeps parents of documents whose id starts with it.
	DocIDPrefix string `json:"docIdPrefix,omitempty"`
	// Metadata keeps parents whose metadata holds every key with exactly
	// the given value.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// MaxFilterScan is the most children one filtered search examines.
const MaxFilterScan = 10_000

// active reports whether f restricts anything.
func (f *Filter) active() bool {
	return f != nil && (f.DocID != "" || f.DocIDPrefix != "" || len(f.Metadata) > 0)
}

// matchesDoc reports whether a document id passes the id filters.
func (f *Filter) matchesDoc(docID string) bool {
	return (f.DocID == "" || docID == f.DocID) && strings.HasPrefix(docID, f.DocIDPrefix)
}

// matchesMetadata reports whether metadata holds every wanted pair.
func (f *Filter) matchesMetadata(metadata map[string]string) bool {
	for k, want := range f.Metadata {
		if got, ok := metadata[k]; !ok || got != want {
			return false
		}
	}
	return true
}

// search retrieves for query, restricted by f when it is active.
func search(ctx context.Context, r *retrieval.Retriever, q *retrieval.Query, opts retrieval.Options, f *Filter) ([]retrieval.Result, error) {
	if !f.active() {
		return r.RetrieveQuery(ctx, q, opts)
	}
	children := &filteredChildren{inner: r.Children, parents: r.Parents, filter: f, matches: map[string]bool{}}
	filtered := *r
	filtered.Children = children
	return filtered.RetrieveQuery(ctx, q, opts)
}

// errReadOnly is returned by the write methods of filteredChildren.
var errReadOnly = errors.New("filtered child index is read-only")

// filteredChildren is a read-only view of a child index holding only the
// children whose parent passes a filter. It lives for one request.
type filteredChildren struct {
	inner   index.VectorStore
	parents parentstore.Reader
	filter  *Filter
	// matches caches, per parent id, whether its metadata passes.
	matches map[string]bool
	// scanned is the most children one inner search has returned so far:
	// a later search starts there rather than redoing smaller ones.
	scanned int
}

// Upsert implements index.VectorStore; the view is read-only.
func (c *filteredChildren) Upsert(context.Context, []index.Record) error { return errReadOnly }

// Delete implements index.VectorStore; the view is read-only.
func (c *filteredChildren) Delete(context.Context, []string) error { return errReadOnly }

// Count implements index.VectorStore with the size of the whole
// index, which bounds the filtered one.
func (c *filteredChildren) Count(ctx context.Context) (int, error) { return c.inner.Count(ctx) }

// Search returns the best req.TopK matching children, in the inner order.
// It returns fewer only when the inner index is exhausted or MaxFilterScan
// children were examined.
func (c *filteredChildren) Search(ctx context.Context, req index.SearchRequest) ([]index.Hit, error) {
	limit := MaxFilterScan
	k := min(max(req.TopK, c.scanned), limit)
	for {
		if k <= 0 {
			return nil, nil
		}
		hits, err := c.inner.Search(ctx, index.SearchRequest{Vector: req.Vector, TopK: k, MaxPostings: req.MaxPostings})
		if err != nil {
			return nil, err
		}
		c.scanned = max(c.scanned, k)
		kept, err := c.keep(ctx, hits)
		if err != nil {
			return nil, err
		}
		if len(kept) >= req.TopK || len(hits) < k || k >= limit {
			return kept[:min(len(kept), req.TopK)], nil
		}
		k = min(k*2, limit)
	}
}

// keep returns the hits whose parent passes the filter, reading the
// metadata of parents not seen before in one batch.
func (c *filteredChildren) keep(ctx context.Context, hits []index.Hit) ([]index.Hit, error) {
	if len(c.filter.Metadata) > 0 {
		if err := c.loadMatches(ctx, hits); err != nil {
			return nil, err
		}
	}
	var kept []index.Hit
	for _, h := range hits {
		if !c.filter.matchesDoc(h.DocID) {
			continue
		}
		if len(c.filter.Metadata) > 0 && !c.matches[h.ParentID] {
			continue
		}
		kept = append(kept, h)
	}
	return kept, nil
}

// loadMatches records whether the metadata of each new parent of hits (of
// a document passing the id filters) passes the filter.
func (c *filteredChildren) loadMatches(ctx context.Context, hits []index.Hit) error {
	var ids []string
	queued := map[string]bool{}
	for _, h := range hits {
		if _, seen := c.matches[h.ParentID]; seen || queued[h.ParentID] || !c.filter.matchesDoc(h.DocID) {
			continue
		}
		queued[h.ParentID] = true
		ids = append(ids, h.ParentID)
	}
	if len(ids) == 0 {
		return nil
	}
	parents, err := c.parents.Get(ctx, ids)
	if err != nil {
		return err
	}
	for i, p := range parents {
		c.matches[ids[i]] = c.filter.matchesMetadata(p.Metadata)
	}
	return nil
}
