package indexer

import (
	"reflect"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// TestRestoreUnpacksOrRemakesAnalyses checks that the first pass of a
// build in memory packs the analyses of the units it makes and that the
// second gets them back, from the packed bytes or, when those are
// damaged, by making the unit again.
func TestRestoreUnpacksOrRemakesAnalyses(t *testing.T) {
	parent, _ := split.NewRecursive(split.DefaultOptions(200, 0))
	child, _ := split.NewRecursive(split.DefaultOptions(50, 5))
	b := &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "r", Parent: parent, Child: child}
	docs := []hierarchy.Document{{ID: "d", Title: "Bees", Text: "Honey bees dance to tell the hive where flowers are. Bumblebees buzz to shake pollen loose from flowers."}}
	s, err := newUnitSource(docs, b, unitShape{analysed: true, contexts: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var scratch bm25.AnalysisScratch
	want := newUnit(docs[0], b, s.shape, &scratch)
	for _, damaged := range []bool{false, true} {
		m := s.unit(0, &scratch)
		pass := &firstPass{units: make([]*Unit, 1), stats: bm25.NewCorpusStats()}
		if err := s.keep(m, pass); err != nil {
			t.Fatal(err)
		}
		u := pass.units[0]
		if u.ChildTerms != nil || u.ContextTerms != nil || len(u.packed) == 0 {
			t.Fatal("the first pass did not pack the analyses")
		}
		if damaged {
			u.packed = u.packed[:len(u.packed)/2]
		}
		s.restore(0, u, &scratch)
		if !reflect.DeepEqual(u.ChildTerms, want.ChildTerms) || !reflect.DeepEqual(u.ContextTerms, want.ContextTerms) {
			t.Errorf("damaged %v: restored analyses differ from the unit's", damaged)
		}
	}
}
