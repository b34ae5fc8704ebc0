package retrieve_test

import (
	"context"
	"errors"
	"testing"

	"github.com/parentrag/parentrag/internal/glove"
	"github.com/parentrag/parentrag/internal/glove/glovetest"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// medical is a corpus where BM25 and word vectors disagree: only one
// document says "physician", another means the same in other words.
var medical = []hierarchy.Document{
	{ID: "exam", Text: "A physician examined the patient in the clinic and wrote a prescription."},
	{ID: "care", Text: "The doctor treated sick people at the hospital with the help of two nurses."},
	{ID: "stocks", Text: "Stock prices fell on the exchange after the quarterly earnings were published."},
	{ID: "music", Text: "The orchestra played a symphony in the concert hall to a full audience."},
}

// hybridIndex indexes medical with BM25 and GloVe vectors served over HTTP.
func hybridIndex(t *testing.T) *retrieve.Retriever {
	t.Helper()
	dense, err := embed.NewOpenAI(embed.OpenAIOptions{Endpoint: glovetest.Start(t), Model: glove.ModelSIF, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	hybrid := &embed.Hybrid{Lexical: lex, Dense: dense}
	built, err := indexer.Build(context.Background(), medical, newBuilder(t, 1000, 200, 0), hybrid, indexer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return built.Retriever()
}

// docs lists the documents of results with what found each best match.
func docs(results []retrieve.Result) (ids, found []string) {
	for _, r := range results {
		ids = append(ids, r.DocID)
		found = append(found, r.Matches[0].FoundBy)
	}
	return ids, found
}

func TestHybridFindsWhatEitherSearchFinds(t *testing.T) {
	r := hybridIndex(t)
	ctx := context.Background()
	ask := func(mode retrieve.SearchMode) ([]string, []string) {
		t.Helper()
		res, err := r.Retrieve(ctx, "physician", retrieve.Options{MaxParents: 2, Search: mode})
		if err != nil {
			t.Fatalf("%q: %v", mode, err)
		}
		return docs(res)
	}
	if ids, _ := ask(retrieve.SearchSparse); len(ids) != 1 || ids[0] != "exam" {
		t.Errorf("BM25 found %v, want [exam] alone: no other document has the word", ids)
	}
	if ids, _ := ask(retrieve.SearchDense); len(ids) != 2 || ids[0] != "exam" || ids[1] != "care" {
		t.Errorf("dense found %v, want exam and care", ids)
	}
	for _, mode := range []retrieve.SearchMode{retrieve.SearchHybrid, retrieve.SearchAuto} {
		ids, found := ask(mode)
		if len(ids) != 2 || ids[0] != "exam" || ids[1] != "care" || found[0] != "both" || found[1] != "dense" {
			t.Errorf("%q found %v by %v, want [exam care] by [both dense]", mode, ids, found)
		}
	}
	// Weights move the balance: with BM25 alone weighed, the documents
	// found by dense search alone rank after what BM25 found.
	res, err := r.Retrieve(ctx, "doctor physician", retrieve.Options{MaxParents: 4, Search: retrieve.SearchHybrid, Fusion: retrieve.Fusion{SparseWeight: 1, DenseWeight: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := docs(res); len(ids) != 4 || !(ids[0] == "exam" || ids[0] == "care") || ids[2] == "exam" || ids[2] == "care" {
		t.Errorf("BM25-weighted hybrid ranks %v: want the two documents BM25 finds first", ids)
	}
}

func TestSearchModeMustFitTheIndex(t *testing.T) {
	lexical := buildIndex(t, medical, newBuilder(t, 1000, 200, 0), indexer.Options{}).Retriever()
	for _, mode := range []retrieve.SearchMode{retrieve.SearchDense, retrieve.SearchHybrid} {
		_, err := lexical.Retrieve(context.Background(), "physician", retrieve.Options{Search: mode})
		if !errors.Is(err, retrieve.ErrSearchMode) {
			t.Errorf("%s over a BM25 index: %v, want ErrSearchMode", mode, err)
		}
	}
	res, err := lexical.Retrieve(context.Background(), "physician", retrieve.Options{})
	if err != nil || len(res) != 1 || res[0].Matches[0].FoundBy != "" {
		t.Errorf("the default over a BM25 index: %v, %+v", err, res)
	}
	if _, err := retrieve.ParseSearchMode("Semantic"); err == nil {
		t.Error("an unknown mode was accepted")
	}
}
