package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// verifySample queries the revision with a passage of one sampled parent
// and records the outcome in v. It fails when the parent does not resolve,
// when a hit child does not resolve to its parent (see checkHits), or when
// the retriever fails or returns no parent. A parent without a word a
// query can match is counted as Unqueryable and not queried. A cancelled
// ctx returns ctx.Err().
func verifySample(ctx context.Context, r *retrieve.Retriever, id string, opts retrieve.Options, v *Verification) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sampled, err := r.Parents.Get(ctx, []string{id})
	if err != nil {
		return cancelledOr(ctx, fmt.Errorf("sampled parent %s does not resolve in the parent store: %w", id, err))
	}
	query := passage(sampled[0].Text, passageWords)
	if query == "" {
		v.Unqueryable++
		return nil
	}
	v.SampledQueries++
	resolved, err := checkHits(ctx, r, query, opts)
	if err != nil {
		return cancelledOr(ctx, fmt.Errorf("query from parent %s: %w", id, err))
	}
	v.ResolvedChildren += resolved
	results, err := r.Retrieve(ctx, query, opts)
	if err != nil {
		if !errors.Is(err, parentstore.ErrNotFound) {
			err = fmt.Errorf("%w: %w", ErrCouldNotCheck, err)
		}
		return cancelledOr(ctx, fmt.Errorf("query from parent %s failed: %w", id, err))
	}
	if len(results) == 0 {
		return fmt.Errorf("query from parent %s returned no parent", id)
	}
	if slices.ContainsFunc(results, func(res retrieve.Result) bool { return res.ParentID == id }) {
		v.SelfHits++
	}
	return nil
}

// checkHits searches the child index with query directly (as opts's
// search mode says), so that what the index says about each hit child (its
// parent and document) is seen, and returns how many hits resolved. Every
// hit child must point to a parent in the parent store, of the same
// document, that lists the child: the child index and the parent store
// then belong to the same revision. ChildTopK 0 means
// retrieve.DefaultChildTopK.
func checkHits(ctx context.Context, r *retrieve.Retriever, query string, opts retrieve.Options) (int, error) {
	topK := opts.ChildTopK
	if topK <= 0 {
		topK = retrieve.DefaultChildTopK
	}
	qv, err := r.Embedder.EmbedQuery(ctx, query)
	if err != nil {
		return 0, fmt.Errorf("%w: embedding the query: %w", ErrCouldNotCheck, err)
	}
	hits, err := r.SearchChildren(ctx, qv, topK, opts)
	if err != nil {
		return 0, fmt.Errorf("%w: searching the child index: %w", ErrCouldNotCheck, err)
	}
	for _, h := range hits {
		if err := resolveHit(ctx, r.Parents, h); err != nil {
			return 0, err
		}
	}
	return len(hits), nil
}

// resolveHit fails unless the hit child's parent is in the parent store,
// belongs to the same document and lists the child among its children.
func resolveHit(ctx context.Context, parents parentstore.Reader, h index.Hit) error {
	got, err := parents.Get(ctx, []string{h.ParentID})
	if errors.Is(err, parentstore.ErrNotFound) {
		return fmt.Errorf("hit child %s points to parent %s, which is not in this revision's parent store", h.ID, h.ParentID)
	}
	if err != nil {
		return fmt.Errorf("resolving parent %s of hit child %s: %w", h.ParentID, h.ID, err)
	}
	p := got[0]
	if p.DocID != h.DocID {
		return fmt.Errorf("hit child %s is of document %q, but its parent %s is of document %q in the parent store", h.ID, h.DocID, p.ID, p.DocID)
	}
	if !slices.ContainsFunc(p.Children, func(s hierarchy.Span) bool { return s.ID == h.ID }) {
		return fmt.Errorf("hit child %s points to parent %s, which does not list it among its children", h.ID, p.ID)
	}
	return nil
}

// cancelledOr returns ctx.Err() when ctx is done, since err then says
// nothing about the revision, and err otherwise.
func cancelledOr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}
