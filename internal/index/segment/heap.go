package segment

// rooted is what a heap of T holds: nearerRoot reports whether the item
// belongs above other.
type rooted[T any] interface{ nearerRoot(other T) bool }

// heapPush appends x to the heap h and restores its order.
func heapPush[T rooted[T]](h []T, x T) []T {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		up := (i - 1) / 2
		if !h[i].nearerRoot(h[up]) {
			break
		}
		h[up], h[i] = h[i], h[up]
		i = up
	}
	return h
}

// heapReplaceRoot puts x in place of the root of the heap h, which must
// not be empty, and restores its order.
func heapReplaceRoot[T rooted[T]](h []T, x T) {
	h[0] = x
	for i := 0; ; {
		top, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].nearerRoot(h[top]) {
			top = l
		}
		if r < len(h) && h[r].nearerRoot(h[top]) {
			top = r
		}
		if top == i {
			return
		}
		h[i], h[top] = h[top], h[i]
		i = top
	}
}
