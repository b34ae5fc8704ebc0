package bundle

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/milvustest"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// TestBundleWithChildrenInMilvus indexes children into a Milvus collection
// (the wire-compatible test server, driven by the real client), saves a
// bundle that names the collection, opens it again and gets the answers of
// the same index built with the embedded store.
func TestBundleWithChildrenInMilvus(t *testing.T) {
	ctx := context.Background()
	srv := milvustest.Start(t)
	ref := VectorStoreRef{Kind: VectorStoreMilvus, Address: srv.Addr(), Collection: "ns_docs_rev1"}
	store, err := milvus.Open(ctx, MilvusConfig(ref))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	if err := store.Create(ctx); err != nil {
		t.Fatal(err)
	}
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := indexer.Build(ctx, corpus(), builder(t), lex, indexer.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Finish(ctx, len(ix.Children)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	m := Manifest{Revision: "rev1", Embedder: Embedder{Kind: EmbedderLexical, K1: bm25.DefaultK1, B: bm25.DefaultB}, VectorStore: ref}
	if _, err := save(dir, ix, m, false); err != nil {
		t.Fatal(err)
	}
	b, err := OpenContext(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	reference := buildIndex(t, corpus()).Retriever()
	for _, q := range []string{"how is a new revision verified", "tomatoes and basil", "reef the mainsail"} {
		got, err := b.Retriever.Retrieve(ctx, q, retrieve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := reference.Retrieve(ctx, q, retrieve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !reflect.DeepEqual(parentIDs(got), parentIDs(want)) {
			t.Fatalf("%q: Milvus bundle answered %v, embedded %v", q, parentIDs(got), parentIDs(want))
		}
	}
	srv.Stop()
	if _, err := OpenContext(ctx, dir); err == nil {
		t.Fatal("a bundle whose Milvus is gone opened without error")
	}
}

// parentIDs lists the parent ids of results.
func parentIDs(results []retrieve.Result) []string {
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = r.ParentID
	}
	return out
}
