package server

import (
	"context"
	"strings"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// Filter restricts a retrieval to parents that match every field given.
//
// It is applied to the children searched, before they are grouped into
// parents, by the child index's filtered search (index.Searcher): the
// embedded and segment indexes find the best matching children exactly,
// so maxParents, aggregation and budget behave exactly as over an index
// holding only the matching parents, unless more than index.MaxOverFetch
// children had to be examined. Milvus and PostgreSQL over-fetch
// (index.OverFetch): matching children ranked below the first
// index.MaxOverFetch hits of the whole index are not found there. Either
// way a very selective filter may return fewer parents than exist.
type Filter struct {
	// DocID keeps parents of exactly this document.
	DocID string `json:"docId,omitempty"`
	// DocIDPrefix keeps parents of documents whose id starts with it.
	DocIDPrefix string `json:"docIdPrefix,omitempty"`
	// Metadata keeps parents whose metadata holds every key with exactly
	// the given value.
	Metadata map[string]string `json:"metadata,omitempty"`
}

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
func search(ctx context.Context, r *retrieve.Retriever, q *retrieve.Query, opts retrieve.Options, f *Filter) ([]retrieve.Result, error) {
	if !f.active() {
		return r.RetrieveQuery(ctx, q, opts)
	}
	children := &filteredChildren{Searcher: r.Children, parents: r.Parents, filter: f, matches: map[string]bool{}}
	filtered := *r
	filtered.Children = children
	return filtered.RetrieveQuery(ctx, q, opts)
}

// filteredChildren is the child index seen through a filter: it holds
// only the children whose parent passes, and each of its searches is the
// inner index's filtered search. It lives for one request.
type filteredChildren struct {
	index.Searcher
	parents parentstore.Reader
	filter  *Filter
	// matches caches, per parent id, whether its metadata passes.
	matches map[string]bool
	// examined counts the children the filter has been asked about in
	// this request; past index.MaxOverFetch it refuses the rest.
	examined int
}

// Search returns the best req.TopK children that pass the filter.
func (c *filteredChildren) Search(ctx context.Context, req index.SearchRequest) ([]index.Hit, error) {
	return c.SearchFiltered(ctx, req, nil)
}

// SearchFiltered returns the best req.TopK children that pass both the
// filter and keep (any, when keep is nil). A parent that cannot be read
// fails the search.
func (c *filteredChildren) SearchFiltered(ctx context.Context, req index.SearchRequest, keep func(index.Hit) bool) ([]index.Hit, error) {
	var readErr error
	hits, err := c.Searcher.SearchFiltered(ctx, req, func(h index.Hit) bool {
		ok, err := c.passes(ctx, h)
		if err != nil && readErr == nil {
			readErr = err
		}
		return ok && (keep == nil || keep(h))
	})
	if readErr != nil {
		return nil, readErr
	}
	return hits, err
}

// passes reports whether the hit's parent passes the filter, reading each
// parent's metadata once per request. A request examines at most
// index.MaxOverFetch children, whichever the index, so that a filter that
// matches nothing costs no more than that.
func (c *filteredChildren) passes(ctx context.Context, h index.Hit) (bool, error) {
	if c.examined++; c.examined > index.MaxOverFetch {
		return false, nil
	}
	if !c.filter.matchesDoc(h.DocID) {
		return false, nil
	}
	if len(c.filter.Metadata) == 0 {
		return true, nil
	}
	if ok, seen := c.matches[h.ParentID]; seen {
		return ok, nil
	}
	parents, err := c.parents.Get(ctx, []string{h.ParentID})
	if err != nil {
		return false, err
	}
	ok := c.filter.matchesMetadata(parents[0].Metadata)
	c.matches[h.ParentID] = ok
	return ok, nil
}
