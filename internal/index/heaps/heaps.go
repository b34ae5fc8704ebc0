// Package heaps is the binary heap the child indexes keep their best
// candidates and their pruned searches' seeds in: a slice whose first
// item is the one nearerRoot puts above every other, each item above the
// two at twice its index plus one and plus two. nearerRoot(a, b) reports
// whether a belongs above b; a heap of the k best keeps the worst at its
// root, so that a candidate is compared with it alone.
package heaps

// Push appends x to the heap h and restores its order; it returns the
// heap, as append does.
func Push[T any](h []T, x T, nearerRoot func(a, b T) bool) []T {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		up := (i - 1) / 2
		if !nearerRoot(h[i], h[up]) {
			break
		}
		h[up], h[i] = h[i], h[up]
		i = up
	}
	return h
}

// ReplaceRoot puts x in place of the root of the heap h, which must not
// be empty, and restores its order.
func ReplaceRoot[T any](h []T, x T, nearerRoot func(a, b T) bool) {
	h[0] = x
	for i := 0; ; {
		top, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && nearerRoot(h[l], h[top]) {
			top = l
		}
		if r < len(h) && nearerRoot(h[r], h[top]) {
			top = r
		}
		if top == i {
			return
		}
		h[i], h[top] = h[top], h[i]
		i = top
	}
}
