package embedded_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/parentrag/parentrag/internal/eval/evaltest"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// TestSquadPrunedEqualsExhaustive indexes the SQuAD v1.1 dev articles as
// serving does (default policy, lexical embedder, default context weight)
// and checks, for every question, that pruned sparse search returns the
// exhaustive scan's children: same ids, same order, bitwise-equal scores,
// at the retriever's first fetch (20), at 3, and with a filter keeping
// one document in two.
func TestSquadPrunedEqualsExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes SQuAD and searches its 10,570 questions four times each; skipped with -short")
	}
	dir := sharedtest.Dir(t, "eval", "squad-v1.1-dev")
	ctx := context.Background()
	corpus, questions, err := evaltest.LoadSet(dir, "articles.jsonl.gz")
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
	ix, err := indexer.Build(ctx, corpus.Docs, compiled.Builder, lex, indexer.Options{ContextWeight: indexer.DefaultContextWeight})
	if err != nil {
		t.Fatal(err)
	}
	store := ix.Store.(*embedded.Store)
	evenDocs := func(h index.Hit) bool { return len(h.DocID)%2 == 0 }
	_, before := store.SparseWork()
	total := 0
	for _, q := range questions {
		qv, err := ix.Embedder.EmbedQuery(ctx, q.Text)
		if err != nil {
			t.Fatal(err)
		}
		total += store.Postings(qv)
		for _, k := range []int{20, 3} {
			req := index.SearchRequest{Vector: qv, TopK: k}
			label := fmt.Sprintf("question %s, k %d", q.ID, k)
			samePrunedExhaustive(t, label, store, func() ([]index.Hit, error) { return store.Search(ctx, req) })
			samePrunedExhaustive(t, label+", filtered", store, func() ([]index.Hit, error) { return store.SearchFiltered(ctx, req, evenDocs) })
		}
	}
	_, after := store.SparseWork()
	exhaustive := 4 * int64(total) // four searches of each question
	pruned := (after - before - exhaustive) / int64(len(embedded.PrunePaths))
	t.Logf("%d questions over %d children: pruned searches visited %d postings per path on average, %.1f%% of the %d an exhaustive scan visits",
		len(questions), store.Stats().Records, pruned, 100*float64(pruned)/float64(exhaustive), exhaustive)
}

// samePrunedExhaustive runs search exhaustively, then pruned by every
// path, and fails unless the hits agree exactly.
func samePrunedExhaustive(t *testing.T, label string, store *embedded.Store, search func() ([]index.Hit, error)) {
	t.Helper()
	store.SetExhaustiveSparse(true)
	want, err := search()
	store.SetExhaustiveSparse(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range embedded.PrunePaths {
		store.SetPrunePath(path)
		got, err := search()
		store.SetPrunePath(embedded.PrunePaths[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s, path %d: pruned %d hits, exhaustive %d", label, path, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || math.Float32bits(got[i].Score) != math.Float32bits(want[i].Score) {
				t.Fatalf("%s, path %d: hit %d pruned %s %v, exhaustive %s %v", label, path, i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
			}
		}
	}
}
