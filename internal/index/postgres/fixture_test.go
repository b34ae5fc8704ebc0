package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/index/postgres"
	"github.com/parentrag/parentrag/internal/index/postgres/pgtest"
	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// fixture is a synthetic corpus indexed by the real pipeline (default
// splitters, lexical BM25 embedder, embedded store, context weight 0.8) and
// the records to put into Postgres: the same children with the same
// vectors, read back from the embedded store's own build, plus a random
// dense vector each.
type fixture struct {
	records []index.Record
	ref     *embedded.Store // the pipeline's embedded store
	dense   *embedded.Store // the same children's dense vectors
	queries []vector.Vector
}

// denseDims is the dimension of the fixture's dense vectors.
const denseDims = 16

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

// capture keeps the records the indexer upserts, as an embedded store
// keeps them.
type capture struct {
	*embedded.Store
	records []index.Record
}

func (c *capture) Upsert(ctx context.Context, records []index.Record) error {
	for _, r := range records {
		r.Vector = r.Vector.Clone()
		c.records = append(c.records, r)
	}
	return c.Store.Upsert(ctx, records)
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
	ref, err := embedded.New(embedded.Options{})
	if err != nil {
		return nil, err
	}
	cap := &capture{Store: ref}
	ix, err := indexer.Build(ctx, gen.Documents(docs), b, lex, indexer.Options{Store: cap, ContextWeight: indexer.DefaultContextWeight})
	if err != nil {
		return nil, err
	}
	f := &fixture{ref: ref}
	if f.dense, err = embedded.New(embedded.Options{Metric: index.Cosine}); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i, r := range cap.records {
		r.Metadata = map[string]string{"doc": r.DocID, "half": fmt.Sprint(i%2 == 0)}
		r.Vector.Dense = randomDense(rng)
		f.records = append(f.records, r)
		if err := f.dense.Upsert(ctx, []index.Record{{ID: r.ID, ParentID: r.ParentID, DocID: r.DocID, Ordinal: r.Ordinal, Vector: vector.Vector{Dense: r.Vector.Dense}}}); err != nil {
			return nil, err
		}
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

func randomDense(rng *rand.Rand) []float32 {
	v := make([]float32, denseDims)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// open opens a fresh table in a schema of its own, dropped at the end.
func open(t *testing.T, dense int) *postgres.Store {
	t.Helper()
	ctx := context.Background()
	cfg := postgres.Config{DSN: pgtest.DSN(t), Schema: pgtest.Schema(t), Table: "children_r1", Dense: dense, InsertBatch: 200}
	st, err := postgres.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		st.Pool().Exec(ctx, `DROP SCHEMA IF EXISTS "`+cfg.Schema+`" CASCADE`)
		st.Close()
	})
	return st
}

// filled creates, fills and finishes a table with the fixture.
func filled(t *testing.T, dense int) (*postgres.Store, *fixture) {
	t.Helper()
	f := corpus(t)
	ctx := context.Background()
	st := open(t, dense)
	if err := st.Create(ctx); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := st.Create(ctx); err != nil {
		t.Fatalf("create again: %v", err)
	}
	records := f.records
	if dense == 0 {
		records = make([]index.Record, len(f.records))
		for i, r := range f.records {
			r.Vector.Dense = nil
			records[i] = r
		}
	}
	var calls, last int
	err := st.Insert(ctx, records, func(done, total int) {
		calls++
		if done <= last || total != len(records) {
			t.Errorf("progress %d/%d after %d", done, total, last)
		}
		last = done
	})
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	if last != len(records) || calls < 2 {
		t.Fatalf("progress reached %d in %d calls, want %d", last, calls, len(records))
	}
	if err := st.Finish(ctx, len(records)); err != nil {
		t.Fatalf("finish: %v", err)
	}
	return st, f
}
