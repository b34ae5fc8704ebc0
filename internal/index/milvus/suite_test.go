package milvus_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// fixture is a synthetic corpus indexed by the real pipeline (default
// splitters, lexical BM25 embedder, embedded store) and the records to put
// into Milvus: the same children with the same vectors.
type fixture struct {
	records []index.Record
	ref     *embedded.Store // the pipeline's embedded store
	queries []vector.Vector
	lex     embed.Embedder
}

var (
	fixtureOnce sync.Once
	fixtureVal  *fixture
	fixtureErr  error
)

// corpus builds (once per test binary) an index of about 1500 children.
func corpus(tb testing.TB) *fixture {
	tb.Helper()
	fixtureOnce.Do(func() { fixtureVal, fixtureErr = buildFixture(150, 60) })
	if fixtureErr != nil {
		tb.Fatal(fixtureErr)
	}
	return fixtureVal
}

func buildFixture(docs, queries int) (*fixture, error) {
	ctx := context.Background()
	gen := synthtest.New(11, 20000)
	parent, err := split.NewRecursive(split.DefaultOptions(1500, 0))
	if err != nil {
		return nil, err
	}
	child, err := split.NewRecursive(split.DefaultOptions(300, 30))
	if err != nil {
		return nil, err
	}
	b := &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "test", Parent: parent, Child: child}
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		return nil, err
	}
	// ContextWeight 0: a child's vector is the embedding of its text, so
	// the records below carry exactly the vectors the pipeline indexed.
	ix, err := indexer.Build(ctx, gen.Documents(docs), b, lex, indexer.Options{})
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(ix.Children))
	for i, c := range ix.Children {
		texts[i] = c.Text
	}
	vecs, err := ix.Embedder.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, err
	}
	parents := make(map[string]*hierarchy.Parent, len(ix.Parents))
	for i := range ix.Parents {
		parents[ix.Parents[i].ID] = &ix.Parents[i]
	}
	f := &fixture{ref: ix.Store.(*embedded.Store), lex: ix.Embedder}
	for i, c := range ix.Children {
		f.records = append(f.records, index.Record{
			ID: c.ID, ParentID: c.ParentID, DocID: c.DocID, Ordinal: c.Ordinal, Vector: vecs[i],
			Text: c.Text,
			Metadata: map[string]string{
				"doc":   c.DocID,
				"title": parents[c.ParentID].Title,
				"half":  fmt.Sprint(i%2 == 0),
			},
		})
	}
	if n, _ := ix.Store.(index.Searcher).Count(ctx); n != len(f.records) {
		return nil, fmt.Errorf("embedded store holds %d children, index has %d", n, len(f.records))
	}
	for range queries {
		q, err := ix.Embedder.EmbedQuery(ctx, gen.Query(2, 6))
		if err != nil {
			return nil, err
		}
		f.queries = append(f.queries, q)
	}
	return f, nil
}

// suite is the store behaviour checked against the test server and, when
// MILVUS_ADDR is set, against a real Milvus.
type suite struct {
	// config returns the configuration of a fresh collection.
	config func(t *testing.T) milvus.Config
	// strict demands bitwise-equal scores and the exact tie order; a real
	// Milvus sums sparse products in its own order, so scores may differ
	// in the last bits and near-ties may swap.
	strict bool
}

func (s suite) open(t *testing.T, cfg milvus.Config) *milvus.Store {
	t.Helper()
	ctx := context.Background()
	st, err := milvus.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		for _, a := range []string{"alias_a", "alias_b"} {
			_ = st.DropAlias(ctx, cfg.Collection+a)
		}
		_ = st.Drop(ctx)
		_ = st.Close(ctx)
	})
	return st
}

// filled creates, fills and finishes a collection with the fixture.
func (s suite) filled(t *testing.T) (*milvus.Store, *fixture) {
	t.Helper()
	f := corpus(t)
	ctx := context.Background()
	st := s.open(t, s.config(t))
	if err := st.Create(ctx); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := st.Create(ctx); err != nil {
		t.Fatalf("create again: %v", err)
	}
	var calls, last int
	// The store is given copies, overwritten once Insert returns: it must
	// keep nothing of them, as the indexer reuses a batch's arrays.
	given := make([]index.Record, len(f.records))
	for i, r := range f.records {
		r.Vector = r.Vector.Clone()
		given[i] = r
	}
	defer overwriteVectors(given)
	err := st.Insert(ctx, given, func(done, total int) {
		calls++
		if done <= last || total != len(f.records) {
			t.Errorf("progress %d/%d after %d", done, total, last)
		}
		last = done
	})
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	if last != len(f.records) || calls < 2 {
		t.Fatalf("progress reached %d in %d calls, want %d", last, calls, len(f.records))
	}
	if err := st.Finish(ctx, len(f.records)); err != nil {
		t.Fatalf("finish: %v", err)
	}
	return st, f
}

// overwriteVectors sets every weight and term id of records' vectors.
func overwriteVectors(records []index.Record) {
	for _, r := range records {
		clear(r.Vector.Dense)
		if sp := r.Vector.Sparse; sp != nil {
			clear(sp.Indices)
			clear(sp.Values)
		}
	}
}

// sameHits compares Milvus hits with the embedded store's.
func (s suite) sameHits(t *testing.T, what string, got, want []index.Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if math.Abs(float64(g.Score-w.Score)) > 1e-5 {
			t.Fatalf("%s: hit %d score %v, want %v", what, i, g.Score, w.Score)
		}
		if g.ID == w.ID {
			if g.ParentID != w.ParentID || g.DocID != w.DocID || g.Ordinal != w.Ordinal {
				t.Fatalf("%s: hit %d is %+v, want %+v", what, i, g, w)
			}
			continue
		}
		if s.strict || math.Abs(float64(g.Score-w.Score)) > 1e-5 {
			t.Fatalf("%s: hit %d is %s (%v), want %s (%v)", what, i, g.ID, g.Score, w.ID, w.Score)
		}
	}
	if !s.strict {
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: hit %d is %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

func (s suite) run(t *testing.T) {
	t.Run("SparseParity", s.testSparseParity)
	t.Run("FilterAndGroup", s.testFilterAndGroup)
	t.Run("DeleteUpsert", s.testDeleteUpsert)
	t.Run("RowCountMismatch", s.testRowCountMismatch)
	t.Run("Aliases", s.testAliases)
	t.Run("SchemaMismatch", s.testSchemaMismatch)
}

// testSparseParity is the key property: the same ids in the same order
// with the same scores as the embedded store, for every query and k.
func (s suite) testSparseParity(t *testing.T) {
	st, f := s.filled(t)
	ctx := context.Background()
	n, err := st.Count(ctx)
	if err != nil || n != len(f.records) {
		t.Fatalf("count %d, %v; want %d", n, err, len(f.records))
	}
	compared := 0
	for qi, q := range f.queries {
		for _, k := range []int{1, 10, 50} {
			req := index.SearchRequest{Vector: q, TopK: k}
			want, err := f.ref.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Search(ctx, req)
			if err != nil {
				t.Fatalf("query %d k %d: %v", qi, k, err)
			}
			s.sameHits(t, fmt.Sprintf("query %d k %d", qi, k), got, want)
			compared += len(got)
		}
	}
	if compared == 0 {
		t.Fatal("no query had a hit")
	}
	// Queries the embedded store answers without hits.
	for _, q := range []index.SearchRequest{
		{Vector: vector.Vector{}, TopK: 5},
		{Vector: vector.Vector{Sparse: &vector.Sparse{}}, TopK: 5},
		{Vector: vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{math.MaxUint32 - 1}, Values: []float32{1}}}, TopK: 5},
		{Vector: vector.Vector{Dense: []float32{1, 2, 3}}, TopK: 5}, // no dense field
	} {
		got, err := st.Search(ctx, q)
		if err != nil || len(got) != 0 {
			t.Fatalf("search %+v: %v, %v", q, got, err)
		}
	}
	// Malformed queries fail as in the embedded store.
	for _, q := range []index.SearchRequest{
		{Vector: f.queries[0], TopK: 0},
		{Vector: vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{2, 1}, Values: []float32{1, 1}}}, TopK: 5},
		{Vector: vector.Vector{Sparse: &vector.Sparse{Indices: []uint32{1}, Values: []float32{1}}, Dense: []float32{1}}, TopK: 5},
	} {
		if _, err := st.Search(ctx, q); !errors.Is(err, index.ErrInvalidInput) {
			t.Fatalf("search %+v: %v is not ErrInvalidInput", q, err)
		}
	}
}

func (s suite) testFilterAndGroup(t *testing.T) {
	st, f := s.filled(t)
	ctx := context.Background()
	byID := make(map[string]*index.Record, len(f.records))
	for i := range f.records {
		byID[f.records[i].ID] = &f.records[i]
	}
	total := len(f.records)
	for qi, q := range f.queries[:20] {
		all, err := f.ref.Search(ctx, index.SearchRequest{Vector: q, TopK: total})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) == 0 {
			continue
		}
		// Filter on metadata: the embedded ranking restricted to matches.
		doc := byID[all[0].ID].DocID
		filters := map[string]func(*index.Record) bool{
			milvus.FieldMetadata + `["half"] == "true"`: func(r *index.Record) bool { return r.Metadata["half"] == "true" },
			"(" + milvus.InFilter(milvus.FieldDocID, doc) + ") and (ordinal >= 1)": func(r *index.Record) bool {
				return r.DocID == doc && r.Ordinal >= 1
			},
		}
		for expr, keep := range filters {
			var want []index.Hit
			for _, h := range all {
				if keep(byID[h.ID]) && len(want) < 10 {
					want = append(want, h)
				}
			}
			got, err := st.SearchWith(ctx, index.SearchRequest{Vector: q, TopK: 10}, milvus.SearchOptions{Filter: expr})
			if err != nil {
				t.Fatalf("filter %s: %v", expr, err)
			}
			s.sameHits(t, fmt.Sprintf("query %d filter %s", qi, expr), got, want)
		}
		// Grouping by parent: the parents of the embedded ranking, in order
		// of their best child, each with at most two children.
		got, err := st.SearchWith(ctx, index.SearchRequest{Vector: q, TopK: 5}, milvus.SearchOptions{GroupByParent: true, GroupSize: 2})
		if err != nil {
			t.Fatalf("grouped search: %v", err)
		}
		var wantParents []string
		best := map[string]float32{}
		for _, h := range all {
			if _, seen := best[h.ParentID]; !seen && len(wantParents) < 5 {
				best[h.ParentID] = h.Score
				wantParents = append(wantParents, h.ParentID)
			}
		}
		var gotParents []string
		per := map[string]int{}
		for i, h := range got {
			if i > 0 && h.Score > got[i-1].Score {
				t.Fatalf("grouped hits out of order: %+v", got)
			}
			if per[h.ParentID] == 0 {
				gotParents = append(gotParents, h.ParentID)
			}
			per[h.ParentID]++
			if per[h.ParentID] > 2 {
				t.Fatalf("parent %s has %d hits", h.ParentID, per[h.ParentID])
			}
		}
		if s.strict {
			slices.Sort(gotParents)
			slices.Sort(wantParents)
			if !slices.Equal(gotParents, wantParents) {
				t.Fatalf("query %d: grouped parents %v, want %v", qi, gotParents, wantParents)
			}
		} else if len(gotParents) != len(wantParents) {
			t.Fatalf("query %d: %d grouped parents, want %d", qi, len(gotParents), len(wantParents))
		}
	}
}

func (s suite) testDeleteUpsert(t *testing.T) {
	st, f := s.filled(t)
	ctx := context.Background()
	q := f.queries[0]
	before, err := st.Search(ctx, index.SearchRequest{Vector: q, TopK: 5})
	if err != nil || len(before) == 0 {
		t.Fatalf("search: %v, %v", before, err)
	}
	victim := before[0].ID
	if err := st.Delete(ctx, []string{victim, "no-such-child"}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Count(ctx); err != nil || n != len(f.records)-1 {
		t.Fatalf("count after delete %d, %v", n, err)
	}
	after, err := st.Search(ctx, index.SearchRequest{Vector: q, TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range after {
		if h.ID == victim {
			t.Fatalf("deleted child %s still found", victim)
		}
	}
	// Upsert as an index.Writer puts it back.
	var rec index.Record
	for _, r := range f.records {
		if r.ID == victim {
			rec = r
		}
	}
	vs := st
	if err := vs.Upsert(ctx, []index.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if err := vs.Upsert(ctx, []index.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if n, err := vs.Count(ctx); err != nil || n != len(f.records) {
		t.Fatalf("count after upserts %d, %v", n, err)
	}
	again, err := vs.Search(ctx, index.SearchRequest{Vector: q, TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	s.sameHits(t, "after upsert", again, before)
	if err := st.Delete(ctx, nil); err != nil {
		t.Fatalf("deleting nothing: %v", err)
	}
}

func (s suite) testRowCountMismatch(t *testing.T) {
	f := corpus(t)
	ctx := context.Background()
	st := s.open(t, s.config(t))
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Insert(ctx, f.records[:100], nil); err != nil {
		t.Fatal(err)
	}
	err := st.Finish(ctx, 101)
	if !errors.Is(err, milvus.ErrRowCount) {
		t.Fatalf("finish with a wrong count: %v", err)
	}
	// Finish is idempotent: with the right count it passes.
	if err := st.Finish(ctx, 100); err != nil {
		t.Fatalf("finish again: %v", err)
	}
}

func (s suite) testAliases(t *testing.T) {
	f := corpus(t)
	ctx := context.Background()
	rev1 := s.open(t, s.config(t))
	rev2 := s.open(t, s.config(t))
	for i, st := range []*milvus.Store{rev1, rev2} {
		if err := st.Create(ctx); err != nil {
			t.Fatal(err)
		}
		if err := st.Insert(ctx, f.records[:50+10*i], nil); err != nil {
			t.Fatal(err)
		}
		if err := st.Finish(ctx, 50+10*i); err != nil {
			t.Fatal(err)
		}
	}
	alias := rev1.Name() + "alias_a"
	if err := rev1.SetAlias(ctx, alias); err != nil {
		t.Fatal(err)
	}
	if err := rev1.SetAlias(ctx, alias); err != nil {
		t.Fatalf("setting the same alias again: %v", err)
	}
	if err := rev1.Drop(ctx); !errors.Is(err, milvus.ErrAliased) {
		t.Fatalf("dropping the aliased collection: %v", err)
	}
	// Readers of the alias see rev1, then rev2 once it moves.
	cfg := rev1.Config()
	cfg.Collection = alias
	reader := s.open(t, cfg)
	if n, err := reader.Count(ctx); err != nil || n != 50 {
		t.Fatalf("count through alias %d, %v", n, err)
	}
	if err := rev2.SetAlias(ctx, alias); err != nil {
		t.Fatal(err)
	}
	if n, err := reader.Count(ctx); err != nil || n != 60 {
		t.Fatalf("count through moved alias %d, %v", n, err)
	}
	if got, err := rev2.Aliases(ctx); err != nil || !slices.Equal(got, []string{alias}) {
		t.Fatalf("aliases of rev2 %v, %v", got, err)
	}
	if got, err := rev1.Aliases(ctx); err != nil || len(got) != 0 {
		t.Fatalf("aliases of rev1 %v, %v", got, err)
	}
	// rev1 is free to go; rev2 is not until its alias is dropped.
	if err := rev1.Drop(ctx); err != nil {
		t.Fatalf("dropping the old revision: %v", err)
	}
	if ok, err := rev1.Exists(ctx); err != nil || ok {
		t.Fatalf("dropped collection exists: %v, %v", ok, err)
	}
	if err := rev1.Drop(ctx); err != nil {
		t.Fatalf("dropping twice: %v", err)
	}
	if err := rev1.DropAlias(ctx, alias); err != nil {
		t.Fatalf("dropping an alias of another collection: %v", err)
	}
	if err := rev2.Drop(ctx); !errors.Is(err, milvus.ErrAliased) {
		t.Fatalf("dropping rev2 while aliased: %v", err)
	}
	if err := rev2.DropAlias(ctx, alias); err != nil {
		t.Fatal(err)
	}
	if err := rev2.Drop(ctx); err != nil {
		t.Fatalf("dropping rev2: %v", err)
	}
	if _, err := rev2.Count(ctx); !errors.Is(err, milvus.ErrNotFound) {
		t.Fatalf("count of a dropped collection: %v", err)
	}
}

func (s suite) testSchemaMismatch(t *testing.T) {
	ctx := context.Background()
	cfg := s.config(t)
	st := s.open(t, cfg)
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	cfg.Dense = 16
	other := s.open(t, cfg)
	if err := other.Create(ctx); !errors.Is(err, milvus.ErrSchemaMismatch) {
		t.Fatalf("create with another dense dimension: %v", err)
	}
}
