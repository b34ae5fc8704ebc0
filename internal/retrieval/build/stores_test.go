package build_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/eval"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/index/postgres"
	"github.com/parentrag/parentrag/internal/index/postgres/pgtest"
	"github.com/parentrag/parentrag/internal/milvustest"
	"github.com/parentrag/parentrag/internal/policy/policytest"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// storeBuild is one child index a revision can be built into.
type storeBuild struct {
	name string
	ref  bundle.VectorStoreRef
	// prepare adds the external store to the request, when there is one.
	prepare func(*build.Request)
}

// stores are the four child indexes: the embedded store, segments, Milvus
// (the wire-compatible test server) and Postgres (PGlite, or the server
// of PARENTRAG_POSTGRES_DSN).
func stores(t testing.TB) ([]storeBuild, bundle.OpenOptions) {
	srv := milvustest.Start(t)
	mcfg := milvus.Config{Address: srv.Addr(), Collection: "squad_parity", Retry: milvus.Retry{Attempts: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}}
	pcfg := postgres.Config{DSN: pgtest.DSN(t), Schema: pgtest.Schema(t), Table: "squad_parity"}
	t.Cleanup(func() { dropSchema(t, pcfg) })
	open := bundle.OpenOptions{
		MilvusConfig:   func(bundle.VectorStoreRef) (milvus.Config, error) { return mcfg, nil },
		PostgresConfig: func(bundle.VectorStoreRef) (postgres.Config, error) { return pcfg, nil },
	}
	return []storeBuild{
		{name: "embedded", ref: bundle.VectorStoreRef{}},
		{name: "segments", ref: bundle.VectorStoreRef{Kind: bundle.VectorStoreSegments}},
		{name: "milvus", ref: bundle.VectorStoreRef{Kind: bundle.VectorStoreMilvus, Address: mcfg.Address, Collection: mcfg.Collection},
			prepare: func(r *build.Request) { r.Collection = &mcfg }},
		{name: "postgres", ref: bundle.VectorStoreRef{Kind: bundle.VectorStorePostgres, Schema: pcfg.Schema, Table: pcfg.Table},
			prepare: func(r *build.Request) { r.Postgres = &pcfg }},
	}, open
}

// dropSchema removes a test's Postgres schema.
func dropSchema(t testing.TB, cfg postgres.Config) {
	st, err := postgres.Open(context.Background(), cfg)
	if err != nil {
		t.Logf("cleaning up: %v", err)
		return
	}
	defer st.Close()
	st.Pool().Exec(context.Background(), `DROP SCHEMA IF EXISTS "`+cfg.Schema+`" CASCADE`)
}

// TestEveryStoreReturnsTheSameParents builds the first SQuAD articles
// into each child index with the lexical embedder (BM25) and asks every
// bundle 400 questions: the same parents come back in the same order with
// the same scores from all four.
func TestEveryStoreReturnsTheSameParents(t *testing.T) {
	dir := sharedtest.Dir(t, "eval", "squad-v1.1-dev")
	corpus, err := eval.LoadCorpus(filepath.Join(dir, "articles.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	queries, err := eval.LoadQueries(filepath.Join(dir, "queries.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	docs, queries := corpus.Docs[:6], queries[:400]
	builds, open := stores(t)
	answers := make([][][]retrieve.Result, len(builds))
	for i, sb := range builds {
		req := policytest.LexicalRequest(t, docs, sb.ref, filepath.Join(t.TempDir(), sb.name))
		if sb.prepare != nil {
			sb.prepare(&req)
		}
		if _, err := build.Run(context.Background(), req); err != nil {
			t.Fatalf("%s: %v", sb.name, err)
		}
		b, err := bundle.OpenWith(context.Background(), req.Dir, open)
		if err != nil {
			t.Fatalf("%s: %v", sb.name, err)
		}
		for _, q := range queries {
			res, err := b.Retriever.Retrieve(context.Background(), q.Text, retrieve.Options{})
			if err != nil {
				t.Fatalf("%s: %q: %v", sb.name, q.Text, err)
			}
			answers[i] = append(answers[i], res)
		}
		b.Close()
	}
	parents := 0
	for qi, q := range queries {
		want := answers[0][qi]
		parents += len(want)
		for i := 1; i < len(builds); i++ {
			got := answers[i][qi]
			if len(got) != len(want) {
				t.Fatalf("%s: %q: %d parents, embedded %d", builds[i].name, q.Text, len(got), len(want))
			}
			for j := range got {
				if got[j].ParentID != want[j].ParentID || got[j].Score != want[j].Score {
					t.Fatalf("%s: %q: parent %d is %s (%v), embedded %s (%v)", builds[i].name, q.Text, j, got[j].ParentID, got[j].Score, want[j].ParentID, want[j].Score)
				}
			}
		}
	}
	if parents < 3*len(queries)-10 {
		t.Fatalf("only %d parents for %d questions", parents, len(queries))
	}
}
