package indexer

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// SetSegmentDocs makes segments of n documents on average until the test
// ends.
func SetSegmentDocs(t *testing.T, n uint64) {
	was := segmentDocs
	segmentDocs = n
	t.Cleanup(func() { segmentDocs = was })
}

// RecordingStore keeps the records upserted into it, in order, their
// vectors copied: like any store, it keeps nothing of what it is given.
type RecordingStore struct {
	index.Writer
	Records []index.Record
}

// Upsert records the batch.
func (s *RecordingStore) Upsert(_ context.Context, records []index.Record) error {
	for _, r := range records {
		r.Vector = r.Vector.Clone()
		s.Records = append(s.Records, r)
	}
	return nil
}

// ReferenceRecords indexes docs the way the indexer did before it analysed
// each text once: Fit and EmbedDocuments analyse every child text, and
// each parent's context is embedded with EmbedDocuments.
func ReferenceRecords(t *testing.T, docs []hierarchy.Document, b hierarchy.DocumentSplitter, e embed.Embedder, weight float32) []index.Record {
	t.Helper()
	ctx := context.Background()
	var units []*Unit
	var slots []slot
	var texts []string
	for _, d := range docs {
		res := b.Build(d)
		l := leadOf(d, res.Parents)
		u := &Unit{Parents: res.Parents, Children: res.Children, LeadText: l.text, LeadEnd: l.end}
		units = append(units, u)
		texts = append(texts, u.childTexts()...)
		parents := u.parentIndex()
		for i, c := range u.Children {
			slots = append(slots, slot{u: u, child: i, parent: parents[c.ParentID]})
		}
	}
	if f, ok := e.(embed.Fitter); ok {
		if err := f.Fit(texts); err != nil {
			t.Fatal(err)
		}
	}
	vecs, err := e.EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	records := make([]index.Record, len(slots))
	for i, s := range slots {
		if weight > 0 {
			cv, err := e.EmbedDocuments(ctx, []string{s.u.contextText(s.parent)})
			if err != nil {
				t.Fatal(err)
			}
			vecs[i] = vecs[i].AddScaled(cv[0], weight)
		}
		c, p := s.u.Children[s.child], s.u.Parents[s.parent]
		records[i] = index.Record{ID: c.ID, ParentID: c.ParentID, DocID: c.DocID, Ordinal: c.Ordinal, Vector: vecs[i], Text: c.Text}
		if len(p.Metadata) > 0 {
			records[i].Metadata = p.Metadata
		}
	}
	return records
}

// AnalyseAll analyses the unit of every document, failing unless each
// analysis is that of its text analysed alone, and returns how many
// children there are and how many were analysed alone.
func AnalyseAll(t *testing.T, docs []hierarchy.Document, b hierarchy.DocumentSplitter) (children, alone int) {
	t.Helper()
	var s bm25.AnalysisScratch
	for _, d := range docs {
		u := newUnit(d, b, unitShape{}, &s)
		alone += analyse(u, true, isProse(d), &s)
		children += len(u.Children)
		checkAnalysedAsAlone(t, u, &s)
	}
	return children, alone
}

// MakeUnits splits and analyses every document, with contexts, as the
// first pass of a build does, keeping nothing.
func MakeUnits(docs []hierarchy.Document, b hierarchy.DocumentSplitter, s *bm25.AnalysisScratch) {
	for _, d := range docs {
		newUnit(d, b, unitShape{analysed: true, contexts: true}, s)
	}
}

// UnitPacks lists the packs of the unit cache in dir, one per scope.
func UnitPacks(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, "*"+packFileExt))
}
