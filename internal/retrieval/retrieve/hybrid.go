package retrieve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// SearchMode chooses which parts of a query's vector search the children.
type SearchMode string

const (
	// SearchAuto searches both parts when the index has both (Hybrid),
	// otherwise the one it has. The default.
	SearchAuto SearchMode = ""
	// SearchHybrid searches the BM25 and the dense part and fuses the two
	// rankings; the index must hold both.
	SearchHybrid SearchMode = "Hybrid"
	// SearchDense searches the embedding model's vectors alone.
	SearchDense SearchMode = "Dense"
	// SearchSparse searches the BM25 vectors alone.
	SearchSparse SearchMode = "Sparse"
)

// ParseSearchMode reads a mode name; "" is SearchAuto.
func ParseSearchMode(s string) (SearchMode, error) {
	switch m := SearchMode(s); m {
	case SearchAuto, SearchHybrid, SearchDense, SearchSparse:
		return m, nil
	}
	return "", fmt.Errorf("search mode %q: want Hybrid, Dense or Sparse", s)
}

// DefaultRRFK is the k of reciprocal rank fusion.
const DefaultRRFK = 60

// Fusion tunes how a hybrid search merges its two rankings: weighted
// reciprocal rank fusion, a child scoring the sum over the rankings it is
// in of weight/(K + rank), rank counted from 1.
type Fusion struct {
	// K dampens the lead of the first ranks (default 60).
	K float64
	// SparseWeight and DenseWeight weigh each ranking; both zero means 1
	// each.
	SparseWeight, DenseWeight float64
}

// withDefaults fills K and the weights.
func (f Fusion) withDefaults() Fusion {
	if f.K <= 0 {
		f.K = DefaultRRFK
	}
	if f.SparseWeight == 0 && f.DenseWeight == 0 {
		f.SparseWeight, f.DenseWeight = 1, 1
	}
	return f
}

// Check refuses negative parameters, which would rank worse matches first.
func (f Fusion) Check() error {
	if f.K < 0 || f.SparseWeight < 0 || f.DenseWeight < 0 {
		return fmt.Errorf("fusion: k and the weights must not be negative")
	}
	return nil
}

// ErrSearchMode marks a query whose search mode asks for a part of the
// vector the index does not hold.
var ErrSearchMode = errors.New("the index cannot be searched that way")

// resolveSearch applies the mode to a query: the vector to search, and
// whether its two parts are searched apart and fused.
func resolveSearch(qv vector.Vector, mode SearchMode) (vector.Vector, bool, error) {
	hasSparse, hasDense := qv.Sparse != nil, len(qv.Dense) > 0
	switch mode {
	case SearchAuto:
		return qv, hasSparse && hasDense, nil
	case SearchSparse:
		if !hasSparse {
			return qv, false, fmt.Errorf("%w: search %s needs BM25 vectors, and the index holds the embedding model's alone", ErrSearchMode, mode)
		}
		return vector.Vector{Sparse: qv.Sparse}, false, nil
	case SearchDense:
		if !hasDense {
			return qv, false, fmt.Errorf("%w: search %s needs an embedding model's vectors, and the index holds BM25's alone", ErrSearchMode, mode)
		}
		return vector.Vector{Dense: qv.Dense}, false, nil
	case SearchHybrid:
		if !hasSparse || !hasDense {
			return qv, false, fmt.Errorf("%w: search %s needs both BM25 and an embedding model's vectors, and the index holds one kind", ErrSearchMode, mode)
		}
		return qv, true, nil
	}
	return qv, false, fmt.Errorf("%w: unknown search mode %q", ErrSearchMode, mode)
}

// SearchChildren returns the best topK children for a query vector as
// Retrieve finds them, before they are grouped by parent: the search mode
// of opts applied, a hybrid query's two searches fused.
func (r *Retriever) SearchChildren(ctx context.Context, qv vector.Vector, topK int, opts Options) ([]index.Hit, error) {
	qv, fused, err := resolveSearch(qv, opts.Search)
	if err != nil {
		return nil, err
	}
	hits, _, err := r.searchChildren(ctx, qv, fused, topK, opts)
	return hits[:min(len(hits), topK)], err
}

// fusedSearch searches the sparse and the dense part of qv apart, k
// children each and both at once, and fuses the rankings (see Fusion): at
// most 2k children, best first, ties by id, each saying which searches
// found it. exhausted is true when neither search had k children to give.
func (r *Retriever) fusedSearch(ctx context.Context, qv vector.Vector, k int, opts Options) ([]index.Hit, bool, error) {
	reqs := [2]index.SearchRequest{
		{Vector: vector.Vector{Sparse: qv.Sparse}, TopK: k, MaxPostings: opts.MaxPostings},
		{Vector: vector.Vector{Dense: qv.Dense}, TopK: k},
	}
	var lists [2][]index.Hit
	var errs [2]error
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Go(func() { lists[i], errs[i] = r.Children.Search(ctx, reqs[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs[0], errs[1]); err != nil {
		return nil, false, err
	}
	return fuse(lists[0], lists[1], opts.Fusion), len(lists[0]) < k && len(lists[1]) < k, nil
}

// fuse merges a sparse and a dense ranking by weighted reciprocal rank
// fusion.
func fuse(sparse, dense []index.Hit, f Fusion) []index.Hit {
	f = f.withDefaults()
	byID := make(map[string]int, len(sparse)+len(dense))
	var out []index.Hit
	add := func(list []index.Hit, weight float64, found index.Found) {
		for rank, h := range list {
			s := float32(weight / (f.K + float64(rank+1)))
			if i, ok := byID[h.ID]; ok {
				out[i].Score += s
				out[i].Found |= found
				continue
			}
			byID[h.ID] = len(out)
			h.Score, h.Found = s, found
			out = append(out, h)
		}
	}
	add(sparse, f.SparseWeight, index.FoundSparse)
	add(dense, f.DenseWeight, index.FoundDense)
	slices.SortFunc(out, func(a, b index.Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// foundBy names which searches of a fused query found a child: "sparse",
// "dense" or "both"; "" when the query was not fused.
func foundBy(f index.Found) string {
	switch f {
	case index.FoundSparse:
		return "sparse"
	case index.FoundDense:
		return "dense"
	case index.FoundSparse | index.FoundDense:
		return "both"
	}
	return ""
}
