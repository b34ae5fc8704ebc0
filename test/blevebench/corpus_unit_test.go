package blevebench

import (
	"reflect"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// TestEachDocumentIsTheGeneratorsCorpus checks that drawing the documents
// one at a time gives the documents the generator returns all at once, so
// both engines index the corpus the benchmark names.
func TestEachDocumentIsTheGeneratorsCorpus(t *testing.T) {
	c := newCorpus(t, 500)
	want := synthtest.New(corpusSeed, corpusVocabulary).Documents(c.docs)
	if got := c.documents(); !reflect.DeepEqual(got, want) {
		t.Fatalf("the %d documents drawn one at a time differ from Documents(%d)", len(got), c.docs)
	}
}
