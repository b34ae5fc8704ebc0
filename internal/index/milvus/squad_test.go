package milvus_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parentrag/parentrag/internal/eval/evaltest"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/milvustest"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// TestSquadParity indexes the SQuAD v1.1 dev articles with the default
// policy and the lexical embedder, puts the children into Milvus (the test
// server) through the store, and checks that every 20th question gets the
// same children (ids, order, scores) and, through the Retriever, the same
// parents as with the embedded store.
func TestSquadParity(t *testing.T) {
	dir := sharedtest.Dir(t, "eval", "squad-v1.1-dev")
	ctx := context.Background()
	corpusData, questions, err := evaltest.LoadSet(dir, "articles.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := policy.Compile(&policy.Default().Spec)
	if err != nil {
		t.Fatal(err)
	}
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	// ContextWeight 0, so the children's vectors are their texts'
	// embeddings and can be handed to Milvus as the pipeline indexed them.
	ix, err := indexer.Build(ctx, corpusData.Docs, compiled.Builder, lex, indexer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(ix.Children))
	for i, c := range ix.Children {
		texts[i] = c.Text
	}
	vecs, err := ix.Embedder.EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	records := make([]index.Record, len(ix.Children))
	for i, c := range ix.Children {
		records[i] = index.Record{
			ID: c.ID, ParentID: c.ParentID, DocID: c.DocID, Ordinal: c.Ordinal, Vector: vecs[i],
			Text: c.Text, Metadata: map[string]string{"doc": c.DocID},
		}
	}

	srv := milvustest.Start(t)
	cfg := testConfig(srv)
	cfg.Collection = "default_squad_" + compiled.Revision[:min(8, len(compiled.Revision))]
	st := openStore(t, cfg)
	if err := st.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Insert(ctx, records, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(ctx, len(records)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d documents, %d parents, %d children in %s", ix.Documents, len(ix.Parents), len(ix.Children), st.Name())

	strict := suite{strict: true}
	viaEmbedded := ix.Retriever()
	viaMilvus := &retrieve.Retriever{Embedder: ix.Embedder, Children: st, Parents: parentstore.NewMemory(ix.Parents)}
	checked := 0
	for i := 0; i < len(questions); i += 20 {
		q := questions[i]
		qv, err := ix.Embedder.EmbedQuery(ctx, q.Text)
		if err != nil {
			t.Fatal(err)
		}
		req := index.SearchRequest{Vector: qv, TopK: 20}
		want, err := ix.Store.(index.Searcher).Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Search(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		strict.sameHits(t, fmt.Sprintf("question %s", q.ID), got, want)

		wantRes, err := viaEmbedded.Retrieve(ctx, q.Text, retrieve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		gotRes, err := viaMilvus.Retrieve(ctx, q.Text, retrieve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(gotRes) != len(wantRes) {
			t.Fatalf("question %s: %d parents, want %d", q.ID, len(gotRes), len(wantRes))
		}
		for j := range gotRes {
			// Milvus groups by parent itself and lists at most three matches
			// per parent; the best match is the same child.
			if gotRes[j].ParentID != wantRes[j].ParentID || gotRes[j].Score != wantRes[j].Score || gotRes[j].Matches[0].ChildID != wantRes[j].Matches[0].ChildID {
				t.Fatalf("question %s: parent %d is %s (%v), want %s (%v)", q.ID, j, gotRes[j].ParentID, gotRes[j].Score, wantRes[j].ParentID, wantRes[j].Score)
			}
		}
		checked++
	}
	t.Logf("%d questions: same children and parents as the embedded store", checked)
}
