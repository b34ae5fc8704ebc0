package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// searchFlags choose which vectors of an index a query searches and how a
// hybrid search fuses them.
type searchFlags struct {
	mode                      string
	rrfK                      float64
	sparseWeight, denseWeight string
}

// register adds the search flags to cmd.
func (f *searchFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "search", "", "which vectors a query searches: Hybrid (BM25 and the embedding model, fused), Dense or Sparse (default: Hybrid when the index has both, else the one it has)")
	fl.Float64Var(&f.rrfK, "rrf-k", retrieve.DefaultRRFK, "k of the reciprocal rank fusion of a hybrid search: a child scores weight/(k + rank) in each ranking")
	fl.StringVar(&f.sparseWeight, "sparse-weight", "1", "weight of the BM25 ranking in a hybrid search")
	fl.StringVar(&f.denseWeight, "dense-weight", "1", "weight of the embedding model's ranking in a hybrid search")
}

// apply sets the search mode and fusion of o, refusing values out of
// range.
func (f *searchFlags) apply(o *retrieve.Options) error {
	mode, err := retrieve.ParseSearchMode(f.mode)
	if err != nil {
		return fmt.Errorf("--search: %w", err)
	}
	fusion := retrieve.Fusion{K: f.rrfK}
	for _, w := range []struct {
		flag, value string
		into        *float64
	}{{"--sparse-weight", f.sparseWeight, &fusion.SparseWeight}, {"--dense-weight", f.denseWeight, &fusion.DenseWeight}} {
		v, err := strconv.ParseFloat(w.value, 64)
		if err != nil || v < 0 || v != v {
			return fmt.Errorf("%s %q: want a number, 0 or more", w.flag, w.value)
		}
		*w.into = v
	}
	if f.rrfK < 1 || fusion.SparseWeight+fusion.DenseWeight == 0 {
		return fmt.Errorf("--rrf-k must be at least 1, and --sparse-weight and --dense-weight not both 0")
	}
	o.Search, o.Fusion = mode, fusion
	return nil
}
