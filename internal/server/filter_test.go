package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
)

// offeringIndex is a child index whose filtered search offers keep n
// children, one each, and returns those it accepts.
type offeringIndex struct {
	index.Searcher
	n int
}

func (o offeringIndex) SearchFiltered(_ context.Context, req index.SearchRequest, keep func(index.Hit) bool) ([]index.Hit, error) {
	var hits []index.Hit
	for i := range o.n {
		if h := (index.Hit{ID: fmt.Sprint(i), ParentID: fmt.Sprint(i), DocID: "manual/" + fmt.Sprint(i)}); keep(h) {
			hits = append(hits, h)
		}
	}
	return hits, nil
}

// TestFilterExaminesAtMostMaxOverFetchChildren offers a filter more
// children than a request may examine: it accepts those it examines and
// refuses the rest without looking at them, whichever the index.
func TestFilterExaminesAtMostMaxOverFetchChildren(t *testing.T) {
	c := &filteredChildren{Searcher: offeringIndex{n: 3 * index.MaxOverFetch}, filter: &Filter{DocIDPrefix: "manual/"}, matches: map[string]bool{}}
	hits, err := c.Search(context.Background(), index.SearchRequest{TopK: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != index.MaxOverFetch || c.examined != 3*index.MaxOverFetch {
		t.Fatalf("%d children accepted of %d offered, want the first %d", len(hits), c.examined, index.MaxOverFetch)
	}
}
