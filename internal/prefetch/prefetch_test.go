package prefetch_test

import (
	"testing"

	"github.com/parentrag/parentrag/internal/prefetch"
)

// TestOfLeavesValuesAlone asks for lines of values of several sizes and
// kinds, and checks that nothing they hold changed.
func TestOfLeavesValuesAlone(t *testing.T) {
	table := make([]uint64, 1<<16)
	for i := range table {
		table[i] = uint64(i) * 7
	}
	for i := range table {
		prefetch.Of(&table[(i*4099)%len(table)])
	}
	for i, v := range table {
		if v != uint64(i)*7 {
			t.Fatalf("table[%d] = %d after prefetching, want %d", i, v, uint64(i)*7)
		}
	}
	s := struct {
		name string
		n    int
	}{"x", 1}
	prefetch.Of(&s)
	if s.name != "x" || s.n != 1 {
		t.Fatalf("struct changed by prefetching: %+v", s)
	}
}
