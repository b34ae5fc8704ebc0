package segment

// chunkLen is how many items a chunk of a chunkedList holds.
const chunkLen = 1 << 14

// chunkedList is a list appended to item by item and read in order, kept
// in chunks of chunkLen items: it grows without copying what it holds,
// where a slice grown by append copies every item about once more and
// clears twice the memory it ends with.
type chunkedList[T any] struct {
	chunks [][]T
	n      int
}

// add appends v.
func (l *chunkedList[T]) add(v T) {
	last := len(l.chunks) - 1
	if last < 0 || len(l.chunks[last]) == chunkLen {
		l.chunks = append(l.chunks, make([]T, 0, chunkLen))
		last++
	}
	l.chunks[last] = append(l.chunks[last], v)
	l.n++
}

// len is the number of items added.
func (l *chunkedList[T]) len() int { return l.n }

// each calls f with every item, in the order they were added.
func (l *chunkedList[T]) each(f func(*T)) {
	for _, c := range l.chunks {
		for i := range c {
			f(&c[i])
		}
	}
}
