package index

import "context"

// MaxOverFetch is the most children one over-fetching filtered search
// examines.
const MaxOverFetch = 10_000

// OverFetch answers a filtered search with unfiltered ones, for indexes
// that cannot filter by a function of their own (Milvus, PostgreSQL): it
// asks search for req.TopK hits, then twice as many, and so on, until
// req.TopK of them pass keep, the index has no more, or MaxOverFetch
// children were examined. The hits are those of search, in its order, so
// the result equals an exact filtered search unless the limit was reached
// first; then it holds fewer hits.
func OverFetch(ctx context.Context, search func(context.Context, SearchRequest) ([]Hit, error), req SearchRequest, keep func(Hit) bool) ([]Hit, error) {
	for k := min(req.TopK, MaxOverFetch); k > 0; k = min(k*2, MaxOverFetch) {
		wide := req
		wide.TopK = k
		hits, err := search(ctx, wide)
		if err != nil {
			return nil, err
		}
		var kept []Hit
		for _, h := range hits {
			if keep(h) {
				kept = append(kept, h)
			}
		}
		if len(kept) >= req.TopK || len(hits) < k || k == MaxOverFetch {
			return kept[:min(len(kept), req.TopK)], nil
		}
	}
	return nil, nil
}
