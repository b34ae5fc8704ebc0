package eval

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// qasperSet is QASPER v0.3 test: 416 papers with `## ` section headings
// and 1,372 questions with extractive answers and evidence paragraphs.
func qasperSet(t *testing.T) evalSet {
	dir := sharedtest.Dir(t, "eval", "qasper-v0.3-test")
	return evalSet{
		corpus:  filepath.Join(dir, "corpus.jsonl.gz"),
		queries: filepath.Join(dir, "queries.jsonl.gz"),
		qrels:   filepath.Join(dir, "qrels", "test.tsv"),
	}
}

// TestQasperParentChildBeatsFlatBaselines checks the quality claims on
// QASPER with the offline embedder: with the default policy, parent-child
// ranks papers at least as well as flat parents (nDCG@10) and returns
// answers at least as often as the better flat baseline at every budget;
// with section parents, answer-in-context at 400 words is at least 0.30
// and at least sentence-window's. Too long for -short, it runs without
// the race detector in make test.
func TestQasperParentChildBeatsFlatBaselines(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes and scores QASPER's 1,372 judged questions; skipped with -short")
	}
	set := qasperSet(t)
	def := runSet(t, set, nil, []string{FlatChild, FlatParent, ParentChild, SentenceWindow})
	flatChild, flatParent, pc, sw := def[0], def[1], def[2], def[3]
	logReports(t, "default policy", def)
	if *pc.NDCG10 < *flatParent.NDCG10 {
		t.Errorf("nDCG@10: parent-child %.3f is below flat-parent %.3f", *pc.NDCG10, *flatParent.NDCG10)
	}
	checkBeatsFlat(t, pc, flatChild, flatParent)
	if len(pc.EvidenceInContext) == 0 {
		t.Error("no evidence-in-context reported, though QASPER questions have evidence")
	}

	sections := runSet(t, set, sectionPolicy(), []string{ParentChild})[0]
	logReports(t, "section parents", []Report{sections})
	if got, want := sections.AnswerInContext["400"], sw.AnswerInContext["400"]; got < want {
		t.Errorf("answer-in-context@400: section parents %.3f are below sentence-window %.3f", got, want)
	}
	if got := sections.AnswerInContext["400"]; got < 0.30 {
		t.Errorf("answer-in-context@400 with section parents = %.3f, want at least 0.30", got)
	}
	if sections.Queries != pc.Queries || pc.Queries != 1372 {
		t.Errorf("scored %d and %d queries, want all 1372 judged questions", pc.Queries, sections.Queries)
	}
}

// sectionPolicy is the default policy with section parents of up to 2000
// characters.
func sectionPolicy() *v1alpha1.ChunkingPolicySpec {
	return &v1alpha1.ChunkingPolicySpec{Parent: &v1alpha1.ChunkSize{ChunkSize: 2000, Boundaries: v1alpha1.BoundariesSections}}
}

// checkBeatsFlat fails unless pc's answer-in-context is at least the
// better flat baseline's at every budget.
func checkBeatsFlat(t *testing.T, pc, flatChild, flatParent Report) {
	t.Helper()
	for _, budget := range evalBudgets {
		key := strconv.Itoa(budget)
		best := max(flatChild.AnswerInContext[key], flatParent.AnswerInContext[key])
		if got := pc.AnswerInContext[key]; got < best {
			t.Errorf("answer-in-context@%d: parent-child %.3f is below the better flat baseline %.3f", budget, got, best)
		}
	}
}

// logReports logs one table row per report, as docs/evaluation.md shows
// them.
func logReports(t *testing.T, title string, reports []Report) {
	t.Helper()
	for _, r := range reports {
		row := "| " + title + " | " + r.Strategy + " | " + f3(*r.NDCG10) + " | " + f3(*r.Hit1) + " |"
		for _, m := range []map[string]float64{r.AnswerInContext, r.EvidenceInContext} {
			for _, b := range evalBudgets {
				row += " " + f3(m[strconv.Itoa(b)]) + " |"
			}
		}
		t.Log(row)
	}
}

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
