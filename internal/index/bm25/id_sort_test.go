package bm25

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// packedIDs returns n distinct ids below vocab, packed with counts, in
// random order.
func packedIDs(r *rand.Rand, n, vocab int) []uint64 {
	ids := make([]uint64, 0, n)
	for _, id := range r.Perm(vocab)[:n] {
		ids = append(ids, uint64(id)<<32|uint64(r.IntN(50)+1))
	}
	return ids
}

// TestSortPackedIDsSorts checks sortPackedIDs against slices.Sort on
// random lists of every length around the radix threshold, for
// vocabularies of one to three bytes of ids, with the spare array reused.
func TestSortPackedIDsSorts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var spare []uint64
	for _, vocab := range []int{1, 200, 256, 257, 70000, 3_000_000} {
		for _, n := range []int{0, 1, 2, radixFrom - 1, radixFrom, radixFrom + 1, 500, 2000} {
			if n > vocab {
				continue
			}
			ids := packedIDs(r, n, vocab)
			want := slices.Sorted(slices.Values(ids))
			got := sortPackedIDs(slices.Clone(ids), vocab, &spare)
			if !slices.Equal(got, want) {
				t.Fatalf("vocab %d, %d ids: sorted to %v, want %v", vocab, n, got, want)
			}
			if len(got) > 0 && len(spare) > 0 && &got[0] == &spare[0] {
				t.Fatalf("vocab %d, %d ids: the spare array holds the result", vocab, n)
			}
		}
	}
}

// BenchmarkSortPackedIDs compares the radix sort with slices.Sort on
// lists of a child's and a context's sizes, to place radixFrom.
func BenchmarkSortPackedIDs(b *testing.B) {
	sorts := map[string]func([]uint64, int, *[]uint64) []uint64{
		"slices.Sort": func(ids []uint64, _ int, _ *[]uint64) []uint64 { slices.Sort(ids); return ids },
		"radix":       radixSortPacked,
	}
	for _, vocab := range []int{1 << 16, 1 << 20} {
		for _, n := range []int{32, 48, 64, 128, 512} {
			r := rand.New(rand.NewPCG(3, 4))
			lists := make([][]uint64, 256)
			for i := range lists {
				lists[i] = packedIDs(r, n, vocab)
			}
			for _, by := range []string{"slices.Sort", "radix"} {
				b.Run(fmt.Sprintf("vocab=%d/n=%d/by=%s", vocab, n, by), func(b *testing.B) {
					work, spare := make([]uint64, n), []uint64(nil)
					i := 0
					for b.Loop() {
						work = append(work[:0], lists[i%len(lists)]...)
						work = sorts[by](work, vocab, &spare)
						i++
					}
				})
			}
		}
	}
}
