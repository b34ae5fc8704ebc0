package rollout

import (
	"context"
	"errors"
	"fmt"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// DefaultSamples is how many parents Verify samples when
// VerifyOptions.Samples is not set.
const DefaultSamples = 16

// VerifyOptions tune Verify.
type VerifyOptions struct {
	// Samples is how many parents are sampled (default 16), chosen
	// deterministically: spread evenly over the sorted parent ids.
	Samples int
	// Retrieval tunes the sample queries; the zero value uses the
	// retriever's defaults.
	Retrieval retrieve.Options
}

// samples returns Samples, or DefaultSamples when it is not positive.
func (o VerifyOptions) samples() int {
	if o.Samples <= 0 {
		return DefaultSamples
	}
	return o.Samples
}

// Verification is what Verify checked.
type Verification struct {
	// Children and Parents are the counts found in the stores.
	Children, Parents int
	// SampledQueries is how many queries were run.
	SampledQueries int
	// ResolvedChildren counts hit children whose parent resolved in this
	// revision's parent store, with the same document, listing the child.
	ResolvedChildren int
	// SelfHits counts sampled parents returned for a query made from their
	// own text (informational: a neighbour may rank higher).
	SelfHits int
	// Unqueryable counts sampled parents without a word a query can match
	// (only stop words or symbols); they are skipped.
	Unqueryable int
}

// Verify checks an opened revision: the counts of the child index and the
// parent store equal the manifest's; for each sampled parent, a query made
// from a passage of its text succeeds and returns at least one parent, and
// every child the query hits points to a parent of this revision's parent
// store that belongs to the same document and lists the child. The counts
// are taken from the stores again, whatever OpenContext checked. The error
// says exactly what failed; a revision without parents fails, since it can
// answer no query.
func Verify(ctx context.Context, b *bundle.Bundle, opts VerifyOptions) (Verification, error) {
	if b == nil || b.Retriever == nil {
		return Verification{}, errors.New("no opened revision to verify")
	}
	return verifyStores(ctx, b.Manifest, b.Retriever, b.ParentIDs(), opts)
}

// ErrCouldNotCheck marks a Verify error that says nothing about the
// revision: a store or the embedder could not be reached. The check
// should be run again rather than the revision refused.
var ErrCouldNotCheck = errors.New("the check could not run")

// verifyStores is Verify over the parts of a revision: its manifest, a
// retriever over its stores, and the ids its parent store lists. A
// cancelled ctx returns ctx.Err().
func verifyStores(ctx context.Context, m bundle.Manifest, r *retrieve.Retriever, parentIDs []string, opts VerifyOptions) (Verification, error) {
	v, err := countStores(ctx, m, r.Children, parentIDs)
	if err != nil {
		return v, err
	}
	if len(parentIDs) == 0 {
		return v, errors.New("the revision holds no parents, so it can answer no query")
	}
	for _, id := range sampleIDs(parentIDs, opts.samples()) {
		if err := verifySample(ctx, r, id, opts.Retrieval, &v); err != nil {
			return v, err
		}
	}
	if v.SampledQueries == 0 {
		return v, fmt.Errorf("none of the %d sampled parents has a word a query can match", v.Unqueryable)
	}
	return v, nil
}

// countStores counts the children of the index and the parents the parent
// store lists, and fails when either differs from the manifest.
func countStores(ctx context.Context, m bundle.Manifest, children index.Searcher, parentIDs []string) (Verification, error) {
	n, err := children.Count(ctx)
	if err != nil {
		return Verification{}, fmt.Errorf("%w: counting children: %w", ErrCouldNotCheck, err)
	}
	v := Verification{Children: n, Parents: len(parentIDs)}
	if v.Children != m.Children {
		return v, fmt.Errorf("child index holds %d children, the manifest says %d", v.Children, m.Children)
	}
	if v.Parents != m.Parents {
		return v, fmt.Errorf("parent store holds %d parents, the manifest says %d", v.Parents, m.Parents)
	}
	return v, nil
}
