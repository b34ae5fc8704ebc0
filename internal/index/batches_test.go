package index

import (
	"slices"
	"testing"
)

// TestBatchesBoundRowsAndBytes checks that runs close at the row and the
// byte bound, keep the order, and hold at least one record however large.
func TestBatchesBoundRowsAndBytes(t *testing.T) {
	records := make([]Record, 7)
	sizes := []int{10, 10, 10, 50, 10, 200, 10}
	for i := range records {
		records[i].ID = string(rune('a' + i))
	}
	size := func(r *Record) int { return sizes[r.ID[0]-'a'] }
	var got []string
	for _, b := range Batches(records, 3, 60, size) {
		ids := ""
		for _, r := range b {
			ids += r.ID
		}
		got = append(got, ids)
	}
	if want := []string{"abc", "de", "f", "g"}; !slices.Equal(got, want) {
		t.Errorf("batches %v, want %v", got, want)
	}
	if b := Batches(nil, 3, 60, size); len(b) != 0 {
		t.Errorf("no records give %d batches", len(b))
	}
}
