package segment

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLargestBoundsAreTheLargest checks that the seeds are the n parents
// of largest positive bound over every search, against sorting them all.
func TestLargestBoundsAreTheLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 50 {
		var searches []*search
		var all []float32
		for range 1 + rng.IntN(4) {
			acc := make([]float32, rng.IntN(3000))
			for p := range acc {
				if rng.IntN(3) > 0 { // some parents hold no query term
					acc[p] = float32(rng.IntN(500)) / 7 // ties too
				}
				if acc[p] > 0 {
					all = append(all, acc[p])
				}
			}
			searches = append(searches, &search{acc: acc})
		}
		n := rng.IntN(400)
		got := largestBounds(searches, n)
		for _, sd := range got {
			if searches[sd.search].acc[sd.parent] != sd.bound {
				t.Fatalf("trial %d: seed %+v does not hold its parent's bound", trial, sd)
			}
		}
		slices.SortFunc(all, func(a, b float32) int { return cmp.Compare(b, a) })
		want := all[:min(n, len(all))]
		bounds := make([]float32, len(got))
		for i, sd := range got {
			bounds[i] = sd.bound
		}
		slices.SortFunc(bounds, func(a, b float32) int { return cmp.Compare(b, a) })
		if !slices.Equal(bounds, want) {
			t.Fatalf("trial %d, n %d: seeds of bounds %v, want %v", trial, n, bounds, want)
		}
	}
}
