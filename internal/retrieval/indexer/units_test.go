package indexer

import (
	"os"
	"reflect"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// TestRestoreRemakesAnalysesWhoseUnitIsGone checks that the second pass
// gets a unit's analyses back from the cache, and, when its file was
// removed after the first pass, by making the unit again.
func TestRestoreRemakesAnalysesWhoseUnitIsGone(t *testing.T) {
	parent, _ := split.NewRecursive(split.DefaultOptions(200, 0))
	child, _ := split.NewRecursive(split.DefaultOptions(50, 5))
	b := &hierarchy.Builder{Strategy: hierarchy.ParentChild, Revision: "r", Parent: parent, Child: child}
	docs := []hierarchy.Document{{ID: "d", Title: "Bees", Text: "Honey bees dance to tell the hive where flowers are. Bumblebees buzz to shake pollen loose from flowers."}}
	cache, err := OpenUnitCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newUnitSource(docs, b, unitShape{analysed: true, contexts: true}, Options{Units: cache, UnitScope: []byte("scope")})
	var scratch embed.AnalysisScratch
	want := newUnit(docs[0], b, s.shape, &scratch)
	for _, gone := range []bool{false, true} {
		u, _, err := s.unit(0, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		s.count(u, embed.NewCorpusStats())
		if u.ChildTerms != nil || u.ContextTerms != nil {
			t.Fatal("the first pass kept the analyses of a cached unit")
		}
		if gone {
			if err := os.RemoveAll(cache.Dir()); err != nil {
				t.Fatal(err)
			}
		}
		s.restore(0, u, &scratch)
		if !reflect.DeepEqual(u.ChildTerms, want.ChildTerms) || !reflect.DeepEqual(u.ContextTerms, want.ContextTerms) {
			t.Errorf("file gone %v: restored analyses differ from the unit's", gone)
		}
	}
}
