package embed

import (
	"cmp"
	"slices"
)

// span is one read of the log covering the records of several keys.
type span struct {
	off, size int64
	keys      []int // positions, in the lookup, of the keys whose records it covers
}

// planSpans groups the present entries (non-zero) into reads: in log
// order, a record that starts where the current span ends (or lies inside
// it, a repeated key) joins it while the span stays within maxSpanBytes.
// Every present entry is covered by exactly one span; a record larger than
// maxSpanBytes gets a span of its own.
func planSpans(entries []indexEntry) []span {
	order := make([]int, 0, len(entries))
	for i, e := range entries {
		if e != 0 {
			order = append(order, i)
		}
	}
	// An entry's offset is its top bits, so entries sort in log order.
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(entries[a], entries[b]) })
	var spans []span
	for _, i := range order {
		e := entries[i]
		end := e.offset() + e.size()
		if n := len(spans); n > 0 {
			s := &spans[n-1]
			if e.offset() <= s.off+s.size && end-s.off <= maxSpanBytes {
				s.size = max(s.size, end-s.off)
				s.keys = append(s.keys, i)
				continue
			}
		}
		spans = append(spans, span{off: e.offset(), size: e.size(), keys: []int{i}})
	}
	return spans
}
