package blevebench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// bleveBatch is how many children go into one bleve batch.
const bleveBatch = 2000

// bleveSide indexes the corpus's children, keyed by child id, in a scorch
// index with the English analyser (stop words, Porter stems) and BM25 with
// parentrag's default k1 and b, nothing stored beside the postings, split
// afresh one document at a time so that no child is kept, and merges it
// to one segment. It puts the index and merge times in seconds into got.
// It returns the index and its
// directory; the caller closes the index.
func bleveSide(b *testing.B, c corpus, log *phaseLog, got metrics) (idx bleve.Index, dir string) {
	b.Helper()
	dir = filepath.Join(b.TempDir(), "bleve")
	idx, err := bleve.New(dir, bleveMapping())
	if err != nil {
		b.Fatal(err)
	}
	n := indexChildren(b, idx, c, log)
	indexed := log.elapsed()
	log.logf("indexed %d children; merging to one segment", n)
	mergeToOneSegment(b, idx)
	log.logf("merged")
	got.set(indexed.Seconds(), "bleve-index-s")
	got.set((log.elapsed() - indexed).Seconds(), "bleve-merge-s")
	return idx, dir
}

// bleveMapping maps a child to one text field, analysed in English,
// scored with BM25 at parentrag's k1 and b, with nothing stored.
func bleveMapping() mapping.IndexMapping {
	search.BM25_k1, search.BM25_b = bm25.DefaultK1, bm25.DefaultB
	field := bleve.NewTextFieldMapping()
	field.Analyzer = en.AnalyzerName
	field.Store, field.IncludeTermVectors, field.IncludeInAll, field.DocValues = false, false, false, false
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("text", field)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.ScoringModel = "bm25"
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	return m
}

// indexChildren indexes every child of the corpus in batches and returns
// how many it indexed.
func indexChildren(b *testing.B, idx bleve.Index, c corpus, log *phaseLog) int {
	b.Helper()
	batch := idx.NewBatch()
	n, expected := 0, int(float64(c.docs)*childrenPerDoc)
	flush := func() {
		if err := idx.Batch(batch); err != nil {
			b.Fatal(err)
		}
		batch.Reset()
		log.progress("indexed children (of about)", n, expected)
	}
	c.eachChild(func(ch hierarchy.Child) {
		if err := batch.Index(ch.ID, map[string]any{"text": ch.Text}); err != nil {
			b.Fatal(err)
		}
		if n++; batch.Size() == bleveBatch {
			flush()
		}
	})
	if batch.Size() > 0 {
		flush()
	}
	return n
}

// mergeToOneSegment force-merges a scorch index, so bleve searches one
// segment as parentrag searches one index.
func mergeToOneSegment(b *testing.B, idx bleve.Index) {
	b.Helper()
	adv, err := idx.Advanced()
	if err != nil {
		b.Fatal(err)
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		b.Fatalf("bleve index is %T, not scorch", adv)
	}
	if err := s.ForceMerge(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
}

// searchBleve matches q against the children's text field, top 20.
func searchBleve(idx bleve.Index, q string) (*bleve.SearchResult, error) {
	query := bleve.NewMatchQuery(q)
	query.SetField("text")
	return idx.Search(bleve.NewSearchRequestOptions(query, retrieve.DefaultChildTopK, 0, false))
}
