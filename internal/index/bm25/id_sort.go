package bm25

import (
	"math/bits"
	"slices"
)

// radixFrom is the shortest list of packed ids that sortPackedIDs
// radix-sorts; shorter ones are comparison-sorted, which is faster for
// them (BenchmarkSortPackedIDs: at 32 ids 0.13 µs against 0.45, at 48
// 0.71 against 0.41, at 512 17.1 against 1.8).
const radixFrom = 48

// sortPackedIDs sorts entries packed as id<<32|count, with distinct ids
// below vocab, into increasing id order, and returns them: in ids' array
// or in spare's, which it may grow. Long lists are sorted by the id's
// bytes, least significant first (one pass a byte of vocab-1), which is
// linear in the list and free of the branches that a comparison sort
// mispredicts about every other time on such keys.
func sortPackedIDs(ids []uint64, vocab int, spare *[]uint64) []uint64 {
	if len(ids) < radixFrom {
		slices.Sort(ids)
		return ids
	}
	return radixSortPacked(ids, vocab, spare)
}

// radixSortPacked is sortPackedIDs' radix sort, for lists of any length.
func radixSortPacked(ids []uint64, vocab int, spare *[]uint64) []uint64 {
	if len(ids) == 0 || slices.IsSorted(ids) {
		return ids
	}
	tmp := slices.Grow((*spare)[:0], len(ids))[:len(ids)]
	src, dst := ids, tmp
	for shift := 32; shift < 32+bits.Len(uint(max(vocab, 1)-1)); shift += 8 {
		radixPass(dst, src, shift)
		src, dst = dst, src
	}
	// Hand back the array that does not hold the result.
	if &src[0] == &ids[0] {
		*spare = tmp
	} else {
		*spare = ids
	}
	return src
}

// radixPass moves src's entries into dst ordered by their byte at shift,
// keeping the order of entries with equal bytes.
func radixPass(dst, src []uint64, shift int) {
	var at [256]int
	for _, v := range src {
		at[byte(v>>shift)]++
	}
	next := 0
	for b, n := range at {
		at[b], next = next, next+n
	}
	for _, v := range src {
		b := byte(v >> shift)
		dst[at[b]] = v
		at[b]++
	}
}
