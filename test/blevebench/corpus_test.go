package blevebench

import (
	"fmt"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// childrenPerDoc is how many children the default policy makes of a
// synthetic document on average; it sizes the corpora.
const childrenPerDoc = 9.8

// corpusSeed and corpusVocabulary draw the synthetic corpus.
const corpusSeed, corpusVocabulary = 5, 20000

// corpus is the synthetic corpus of one size, drawn afresh on each pass
// and split by one builder, so that every pass sees the same documents and
// the same children, with the same ids, without any pass keeping them.
type corpus struct {
	docs     int
	splitter *hierarchy.Builder
}

// newCorpus returns a corpus of about children children, split with the
// default policy's sizes (parents of 1500 characters, children of 300
// with an overlap of 30).
func newCorpus(tb testing.TB, children int) corpus {
	tb.Helper()
	parent, err := split.NewRecursive(split.DefaultOptions(1500, 0))
	if err != nil {
		tb.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(300, 30))
	if err != nil {
		tb.Fatal(err)
	}
	return corpus{
		docs:     int(float64(children)/childrenPerDoc + 0.5),
		splitter: &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "bench", Parent: parent, Child: child},
	}
}

// eachDocument calls fn with every document in order, one at a time: the
// documents synthtest.Corpus.Documents returns for the corpus's size.
func (c corpus) eachDocument(fn func(hierarchy.Document)) {
	gen := synthtest.New(corpusSeed, corpusVocabulary)
	for i := range c.docs {
		// Documents(1) draws what Documents(n) draws for each document;
		// only the id, which is not in the text, is its own.
		d := gen.Documents(1)[0]
		d.ID = fmt.Sprintf("doc-%05d", i)
		fn(d)
	}
}

// documents returns every document, for a build that takes them all.
func (c corpus) documents() []hierarchy.Document {
	docs := make([]hierarchy.Document, 0, c.docs)
	c.eachDocument(func(d hierarchy.Document) { docs = append(docs, d) })
	return docs
}

// eachChild calls fn with every child of every document, in order.
func (c corpus) eachChild(fn func(hierarchy.Child)) {
	c.eachDocument(func(d hierarchy.Document) {
		for _, ch := range c.splitter.Build(d).Children {
			fn(ch)
		}
	})
}

// questions returns n questions of 4 to 8 words drawn with the corpus's
// Zipf law.
func (c corpus) questions(n int) []string {
	return synthtest.New(corpusSeed, corpusVocabulary).Questions(n)
}
