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
	c := l.n / chunkLen
	if c == len(l.chunks) {
		l.chunks = append(l.chunks, make([]T, chunkLen))
	}
	l.chunks[c][l.n%chunkLen] = v
	l.n++
}

// reset empties the list, keeping its chunks for the items added next.
func (l *chunkedList[T]) reset() { l.n = 0 }

// len is the number of items added.
func (l *chunkedList[T]) len() int { return l.n }

// each calls f with every item, in the order they were added.
func (l *chunkedList[T]) each(f func(*T)) {
	for c, left := 0, l.n; left > 0; c++ {
		chunk := l.chunks[c][:min(left, chunkLen)]
		for i := range chunk {
			f(&chunk[i])
		}
		left -= len(chunk)
	}
}
