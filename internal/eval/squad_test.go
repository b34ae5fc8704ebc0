package eval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// TestSquadParentChildBeatsFlatBaselines checks the published quality claim
// on every SQuAD v1.1 dev question: with the default policy and the offline
// embedder, parent-child answer-in-context is at least the better flat
// baseline at every budget and flat-parent on nDCG@10, and at least 0.93
// at 400 words.
func TestSquadParentChildBeatsFlatBaselines(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes and scores 10,570 questions three times; skipped with -short")
	}
	reports := runSet(t, squadSet(t), nil, []string{FlatChild, FlatParent, ParentChild})
	flatChild, flatParent, pc := reports[0], reports[1], reports[2]
	logReports(t, "default policy", reports)
	if *pc.NDCG10 < *flatParent.NDCG10 {
		t.Errorf("nDCG@10: parent-child %.3f is below flat-parent %.3f", *pc.NDCG10, *flatParent.NDCG10)
	}
	checkBeatsFlat(t, pc, flatChild, flatParent)
	if got := pc.AnswerInContext["400"]; got < 0.93 {
		t.Errorf("answer-in-context@400 = %.3f, want at least 0.93", got)
	}
	if pc.Queries != 10570 || *pc.Hit5 < 0.85 {
		t.Errorf("parent-child scored %d queries with hit@5 %.3f; want 10570 queries and hit@5 >= 0.85", pc.Queries, *pc.Hit5)
	}
}

// squadSet is the SQuAD v1.1 development set: 48 articles, 10,570
// questions judged by paragraph.
func squadSet(t *testing.T) evalSet {
	dir := sharedtest.Dir(t, "eval", "squad-v1.1-dev")
	return evalSet{
		corpus:  filepath.Join(dir, "articles.jsonl.gz"),
		queries: filepath.Join(dir, "queries.jsonl.gz"),
		qrels:   filepath.Join(dir, "qrels-test.tsv"),
	}
}

// evalSet names the files of an evaluation set. With half 1 or 2 only
// that half of the questions is scored (see Half), and with every above 1
// only every every-th of them. adaptive tunes the adaptive strategy (the
// defaults when zero).
type evalSet struct {
	corpus, queries, qrels string
	half, every            int
	adaptive               *retrieve.AdaptiveOptions
}

// evalBudgets are the budgets of the published tables.
var evalBudgets = []int{100, 200, 400, 800}

// runSet evaluates strategies on a set with a policy (nil: the default)
// and the offline embedder, as `parentrag eval` does.
func runSet(t *testing.T, set evalSet, spec *v1alpha1.ChunkingPolicySpec, strategies []string) []Report {
	t.Helper()
	corpus, err := LoadCorpus(set.corpus)
	if err != nil {
		t.Fatal(err)
	}
	queries, err := LoadQueries(set.queries)
	if err != nil {
		t.Fatal(err)
	}
	queries = Half(queries, set.half)
	if set.every > 1 {
		queries = everyNth(queries, set.every)
	}
	qrels, err := LoadQrels(set.qrels)
	if err != nil {
		t.Fatal(err)
	}
	if spec == nil {
		spec = &policy.Default().Spec
	}
	compiled, err := policy.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Builder:          compiled.Builder,
		NewEmbedder:      func() (embed.Embedder, error) { return bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB) },
		ContextWeight:    indexer.DefaultContextWeight,
		Budgets:          evalBudgets,
		MaxParents:       retrieve.DefaultMaxParents,
		BudgetMaxParents: 20,
		Adaptive:         retrieve.AdaptiveOptions{MergeShare: retrieve.DefaultMergeShare, WindowSentences: retrieve.DefaultWindowSentences},
	}
	if set.adaptive != nil {
		cfg.Adaptive = *set.adaptive
	}
	reports, err := Run(context.Background(), corpus, queries, qrels, strategies, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return reports
}

// everyNth keeps queries 0, n, 2n, ...
func everyNth(queries []Query, n int) []Query {
	var out []Query
	for i := 0; i < len(queries); i += n {
		out = append(out, queries[i])
	}
	return out
}
