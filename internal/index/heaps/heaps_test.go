package heaps

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// Through any mix of pushes and root replacements the heap holds what it
// was given, each item at or above its children in nearerRoot's order,
// and its root is the least.
func TestHeapKeepsItsOrder(t *testing.T) {
	less := func(a, b int) bool { return a < b }
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var h, all []int
		for range r.IntN(300) {
			x := r.IntN(50) // ties too
			if len(h) > 0 && r.IntN(3) == 0 {
				all[slices.Index(all, h[0])] = x
				ReplaceRoot(h, x, less)
			} else {
				h = Push(h, x, less)
				all = append(all, x)
			}
			for i := 1; i < len(h); i++ {
				if less(h[i], h[(i-1)/2]) {
					t.Fatalf("trial %d: item %d (%d) is below its parent (%d)", trial, i, h[i], h[(i-1)/2])
				}
			}
			if h[0] != slices.Min(all) {
				t.Fatalf("trial %d: root %d, the least held is %d", trial, h[0], slices.Min(all))
			}
		}
		held := slices.Clone(h)
		slices.Sort(held)
		slices.Sort(all)
		if !slices.Equal(held, all) {
			t.Fatalf("trial %d: holds %v, was given %v", trial, held, all)
		}
	}
}

// A heap of k whose root is replaced by anything larger keeps the k
// largest of a stream.
func TestHeapKeepsTheKLargest(t *testing.T) {
	less := func(a, b int) bool { return a < b }
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 100 {
		k := 1 + r.IntN(20)
		var h, all []int
		for range r.IntN(500) {
			x := r.IntN(1000)
			all = append(all, x)
			switch {
			case len(h) < k:
				h = Push(h, x, less)
			case x > h[0]:
				ReplaceRoot(h, x, less)
			}
		}
		slices.SortFunc(all, func(a, b int) int { return cmp.Compare(b, a) })
		want := all[:min(k, len(all))]
		slices.SortFunc(h, func(a, b int) int { return cmp.Compare(b, a) })
		if !slices.Equal(h, want) {
			t.Fatalf("trial %d: kept %v, want %v", trial, h, want)
		}
	}
}
