package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/eval"
)

// evalFiles writes a tiny corpus, three queries and qrels that judge two
// of them. The unjudged query matches nothing, so scoring it would lower
// every ranking metric.
func evalFiles(t *testing.T, dir string) (corpus, queries, qrels, policy string) {
	t.Helper()
	corpus = writeFile(t, dir, "corpus.jsonl", strings.Join([]string{
		`{"_id":"zebra","title":"Zebras","text":"Zebras have black and white stripes. The stripes repel biting flies.\n\nA group of zebras is called a dazzle."}`,
		`{"_id":"lion","title":"Lions","text":"Lions live in prides. Lionesses hunt together at dusk.\n\nA male lion has a mane."}`,
		`{"_id":"baobab","title":"Baobab","text":"The baobab tree stores water in its swollen trunk and lives for centuries."}`,
	}, "\n")+"\n")
	queries = writeFile(t, dir, "queries.jsonl", strings.Join([]string{
		`{"_id":"q1","text":"what is a group of zebras called","metadata":{"answers":["dazzle"]}}`,
		`{"_id":"q2","text":"where does the baobab store water","metadata":{"answers":["swollen trunk"]}}`,
		`{"_id":"q3","text":"qwzxv plimf","metadata":{"answers":["nothing"]}}`,
	}, "\n")+"\n")
	qrels = writeFile(t, dir, "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\tzebra\t1\nq2\tbaobab\t1\n")
	policy = writeFile(t, dir, "policy.yaml", testPolicy)
	return corpus, queries, qrels, policy
}

func TestEvalJSON(t *testing.T) {
	dir := t.TempDir()
	corpus, queries, qrels, policy := evalFiles(t, dir)
	out, stderr := mustExecute(t, "eval", "--quiet", "--json", "--corpus", corpus, "--queries", queries,
		"--qrels", qrels, "--policy", policy, "--budgets", "40,10, 40")
	if stderr != "" {
		t.Errorf("--quiet, yet stderr: %q", stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	wantKeys := []string{"answerInContext", "answerInDefault", "defaultWords", "hit@1", "hit@5", "indexSeconds", "mrr@10", "ndcg@10", "queries", "queryP50Ms", "queryP99Ms", "recall@100", "strategy"}
	var strategies []string
	for _, line := range lines {
		if got := keysOf(t, json.RawMessage(line)); !slices.Equal(got, wantKeys) {
			t.Errorf("keys %v, want exactly %v", got, wantKeys)
		}
		var r eval.Report
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		strategies = append(strategies, r.Strategy)
		if r.Queries != 2 {
			t.Errorf("%s: %d queries scored, want the 2 the qrels judge", r.Strategy, r.Queries)
		}
		for name, v := range map[string]*float64{"ndcg@10": r.NDCG10, "recall@100": r.Recall100, "hit@1": r.Hit1, "hit@5": r.Hit5, "mrr@10": r.MRR10} {
			if v == nil || *v < 0 || *v > 1 {
				t.Errorf("%s: %s = %v", r.Strategy, name, v)
			}
		}
		// Both judged queries are easy: scoring the unjudged one would
		// pull these below 1.
		if r.Hit5 == nil || *r.Hit5 != 1 || r.Recall100 == nil || *r.Recall100 != 1 {
			t.Errorf("%s: hit@5 %v recall@100 %v, want 1", r.Strategy, deref(r.Hit5), deref(r.Recall100))
		}
		keys := make([]string, 0, len(r.AnswerInContext))
		for k, v := range r.AnswerInContext {
			keys = append(keys, k)
			if v < 0 || v > 1 {
				t.Errorf("%s: answerInContext[%s] = %v", r.Strategy, k, v)
			}
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"10", "40"}) {
			t.Errorf("%s: answerInContext keys %v, want the budgets 10 and 40", r.Strategy, keys)
		}
		if r.AnswerInContext["40"] != 1 {
			t.Errorf("%s: answer-in-context at 40 words is %v, want 1", r.Strategy, r.AnswerInContext["40"])
		}
		// Both judged queries' default retrievals hold their answers.
		if r.AnswerInDefault == nil || *r.AnswerInDefault != 1 || r.DefaultWords <= 0 {
			t.Errorf("%s: answer in the default retrieval %v in %.0f words, want 1", r.Strategy, deref(r.AnswerInDefault), r.DefaultWords)
		}
		if r.IndexSeconds <= 0 || r.QueryP50Ms <= 0 || r.QueryP99Ms < r.QueryP50Ms {
			t.Errorf("%s: index %vs, p50 %vms, p99 %vms", r.Strategy, r.IndexSeconds, r.QueryP50Ms, r.QueryP99Ms)
		}
	}
	if !slices.Equal(strategies, eval.AllStrategies) {
		t.Errorf("strategies %v, want %v", strategies, eval.AllStrategies)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestEvalWithoutQrelsAndTable(t *testing.T) {
	dir := t.TempDir()
	corpus, queries, _, policy := evalFiles(t, dir)
	out, _ := mustExecute(t, "eval", "--quiet", "--json", "--corpus", corpus, "--queries", queries, "--policy", policy,
		"--strategy", "parent-child", "--budgets", "40")
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r["strategy"] != "parent-child" || r["queries"] != float64(3) || r["ndcg@10"] != nil {
		t.Errorf("without qrels: %v", r)
	}
	table, stderr := mustExecute(t, "eval", "--corpus", corpus, "--queries", queries, "--policy", policy,
		"--strategy", "flat-child, parent-child", "--budgets", "40,40")
	header := strings.Fields(strings.SplitN(table, "\n", 2)[0])
	if !slices.Equal(header, []string{"strategy", "queries", "nDCG@10", "R@100", "hit@1", "hit@5", "MRR@10", "AiC@40", "AiC@def", "words", "index", "s", "p50", "ms", "p99", "ms"}) {
		t.Errorf("table header %v", header)
	}
	if strings.Count(table, "\n") != 3 || !strings.Contains(stderr, "parent-child: indexed 3 documents") {
		t.Errorf("table:\n%s\nlog:\n%s", table, stderr)
	}
}

func TestEvalRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	corpus, queries, qrels, policy := evalFiles(t, dir)
	base := []string{"eval", "--quiet", "--corpus", corpus, "--queries", queries, "--qrels", qrels, "--policy", policy}
	cases := map[string][]string{
		"--budgets":            {"--budgets", "0"},
		"--budgets ":           {"--budgets", "-5"},
		"--budgets  ":          {"--budgets", "ten"},
		"--budgets   ":         {"--budgets", "10,,20"},
		"--budgets    ":        {"--budgets", ""},
		"--strategy":           {"--strategy", "parent-child,nope"},
		"--aggregation":        {"--aggregation", "Median"},
		"--max-parents":        {"--max-parents", "0"},
		"--child-top-k":        {"--child-top-k", "-1"},
		"--merge-share must":   {"--merge-share", "0"},
		"--merge-share must ":  {"--window-sentences", "-1"},
		"--merge-share must  ": {"--half", "3"},
		"bm25 b must be":       {"--b", "1.5"},
		"bm25 k1 must be":      {"--k1", "-1"},
		"--corpus and":         {"--corpus", ""},
		"no query to evaluate": {"--qrels", writeFile(t, dir, "other.tsv", "query-id\tcorpus-id\tscore\nq9\tzebra\t1\n")},
	}
	for want, extra := range cases {
		out, _, err := execute(t, append(append([]string{}, base...), extra...)...)
		if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(want)) {
			t.Errorf("%v: got %v, want an error about %s", extra, err, want)
		}
		if out != "" {
			t.Errorf("%v: printed %q", extra, out)
		}
	}
}

func TestEvalScoresEvidenceInContext(t *testing.T) {
	dir := t.TempDir()
	corpus, _, _, policy := evalFiles(t, dir)
	queries := writeFile(t, dir, "evidence.jsonl", strings.Join([]string{
		`{"_id":"q1","text":"what is a group of zebras called","metadata":{"answers":["dazzle"],"evidence":["A group of zebras is called a dazzle.", " "]}}`,
		`{"_id":"q2","text":"where does the baobab store water","metadata":{"answers":[]}}`,
		`{"_id":"q3","text":"qwzxv plimf","metadata":{"evidence":["Lions live in prides."]}}`,
	}, "\n")+"\n")
	out, _ := mustExecute(t, "eval", "--quiet", "--json", "--corpus", corpus, "--queries", queries, "--policy", policy,
		"--strategy", "parent-child", "--budgets", "40")
	var r eval.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// q1's evidence is found; q3 matches nothing; q2 has none and does not count.
	if got := r.EvidenceInContext["40"]; got != 0.5 {
		t.Errorf("evidenceInContext@40 = %v, want 0.5 (1 of the 2 queries with evidence)", got)
	}
	if got := r.AnswerInContext["40"]; got != 1 {
		t.Errorf("answerInContext@40 = %v, want 1 (the one query with answers)", got)
	}
	table, _ := mustExecute(t, "eval", "--quiet", "--corpus", corpus, "--queries", queries, "--policy", policy,
		"--strategy", "parent-child", "--budgets", "40")
	header := strings.Fields(strings.SplitN(table, "\n", 2)[0])
	if !slices.Contains(header, "EiC@40") || !slices.Contains(header, "AiC@40") {
		t.Errorf("table header %v, want AiC@40 and EiC@40", header)
	}
}
