package eval

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// TestSquadParentChildBeatsFlatBaselines checks the published quality claim
// on every SQuAD v1.1 dev question: with the default policy and the offline
// embedder, parent-child answer-in-context is at least the better flat
// baseline at every budget, and at least 0.93 at 400 words.
func TestSquadParentChildBeatsFlatBaselines(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes and scores 10,570 questions three times; skipped with -short")
	}
	dir := sharedtest.Dir(t, "eval", "squad-v1.1-dev")
	reports := runSquad(t, dir, []string{FlatChild, FlatParent, ParentChild})
	flatChild, flatParent, pc := reports[0], reports[1], reports[2]
	for _, budget := range []int{100, 200, 400, 800} {
		key := strconv.Itoa(budget)
		best := max(flatChild.AnswerInContext[key], flatParent.AnswerInContext[key])
		got := pc.AnswerInContext[key]
		t.Logf("answer-in-context@%d: parent-child %.3f, flat-child %.3f, flat-parent %.3f", budget, got, flatChild.AnswerInContext[key], flatParent.AnswerInContext[key])
		if got < best {
			t.Errorf("answer-in-context@%d: parent-child %.3f is below the better flat baseline %.3f", budget, got, best)
		}
	}
	if got := pc.AnswerInContext["400"]; got < 0.93 {
		t.Errorf("answer-in-context@400 = %.3f, want at least 0.93", got)
	}
	if pc.Queries != 10570 || *pc.Hit5 < 0.85 {
		t.Errorf("parent-child scored %d queries with hit@5 %.3f; want 10570 queries and hit@5 >= 0.85", pc.Queries, *pc.Hit5)
	}
}

// runSquad evaluates strategies on the SQuAD files in dir with the default
// policy, as `parentrag eval` does.
func runSquad(t *testing.T, dir string, strategies []string) []Report {
	t.Helper()
	corpus, err := LoadCorpus(filepath.Join(dir, "articles.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	queries, err := LoadQueries(filepath.Join(dir, "queries.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := LoadQrels(filepath.Join(dir, "qrels-test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := policy.Compile(&policy.Default().Spec)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Builder:          compiled.Builder,
		NewEmbedder:      func() (embed.Embedder, error) { return embed.NewLexical(embed.DefaultK1, embed.DefaultB) },
		ContextWeight:    indexer.DefaultContextWeight,
		Budgets:          []int{100, 200, 400, 800},
		MaxParents:       retrieval.DefaultMaxParents,
		BudgetMaxParents: 20,
	}
	reports, err := Run(context.Background(), corpus, queries, qrels, strategies, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return reports
}
