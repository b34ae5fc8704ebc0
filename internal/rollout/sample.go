package rollout

import (
	"slices"
	"strings"

	"github.com/parentrag/parentrag/internal/index/bm25"
)

// passageWords is how many words that a query can match a sampled
// parent's query holds.
const passageWords = 12

// sampleIDs returns n of ids spread evenly over their sorted order, the
// first included, or all of them sorted when there are no more than n.
// The same ids always give the same sample, whatever their order.
func sampleIDs(ids []string, n int) []string {
	sorted := slices.Sorted(slices.Values(ids))
	if n >= len(sorted) {
		return sorted
	}
	out := make([]string, n)
	for i := range out {
		out[i] = sorted[i*len(sorted)/n]
	}
	return out
}

// passage returns the beginning of text as a query a person might type:
// consecutive words up to and including the limit-th that has an index term
// (stop words and bare symbols have none, so they do not count), joined by
// single spaces. It is empty when no word of text has an index term.
func passage(text string, limit int) string {
	var words []string
	counted := 0
	for _, w := range strings.Fields(text) {
		if counted == limit {
			break
		}
		words = append(words, w)
		if len(bm25.Analyze(w)) > 0 {
			counted++
		}
	}
	if counted == 0 {
		return ""
	}
	return strings.Join(words, " ")
}
