package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/parentrag/parentrag/internal/eval"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// evalFlags are the options of parentrag eval.
type evalFlags struct {
	corpus, queries, qrels, policyPath string
	strategies, budgets                string
	maxParents, budgetMaxParents       int
	childTopK                          int
	aggregation                        string
	contextWeight, k1, b               float64
	mergeShare                         float64
	windowSentences, half              int
	asJSON, quiet                      bool
	// An embedding model, fused with BM25 (hybrid) by default.
	endpoint, model, apiKeyEnv string
	dimensions                 int
	search                     searchFlags
	stores                     evalStoreFlags
}

// newEvalCommand scores retrieval strategies on a corpus with questions.
func newEvalCommand() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval --corpus corpus.jsonl[.gz] --queries queries.jsonl[.gz] [--qrels qrels.tsv] --policy POLICY.yaml",
		Short: "Score parent-child retrieval against flat baselines on a corpus with questions",
		Long: `Index the corpus once per strategy and score every question:
document (or paragraph) nDCG@10, recall@100, hit@1, hit@5 and MRR@10 against
the qrels, answer-in-context at each word budget, index time and query
latency. With --qrels only the queries it judges are scored (BEIR).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEval(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.corpus, "corpus", "", "documents, one JSON object per line (_id, title, text[, paragraph_ids])")
	fl.StringVar(&f.queries, "queries", "", "questions, one JSON object per line (_id, text[, metadata.answers, metadata.evidence])")
	fl.StringVar(&f.qrels, "qrels", "", "relevance judgements: query-id, corpus-id, score (TSV with a header)")
	fl.StringVar(&f.policyPath, "policy", "", "ChunkingPolicy YAML file (default: the built-in default policy)")
	fl.StringVar(&f.strategies, "strategy", strings.Join(eval.AllStrategies, ","), "strategies to score, comma-separated: "+strings.Join(eval.AllStrategies, ", "))
	fl.StringVar(&f.budgets, "budgets", "100,200,400,800", "context budgets in words for answer-in-context")
	fl.IntVar(&f.maxParents, "max-parents", retrieve.DefaultMaxParents, "parents returned by the grouped strategies")
	fl.IntVar(&f.budgetMaxParents, "budget-max-parents", 20, "parents a budgeted retrieval may return: the budget decides how many fit")
	fl.IntVar(&f.childTopK, "child-top-k", retrieve.DefaultChildTopK, "children fetched first")
	fl.StringVar(&f.aggregation, "aggregation", string(retrieve.AggregateMax), "Max, Mean or Sum")
	fl.Float64Var(&f.contextWeight, "context-weight", indexer.DefaultContextWeight, "weight of each child's context (title and parent text) in its vector, for every strategy")
	fl.Float64Var(&f.k1, "k1", bm25.DefaultK1, "BM25 term-frequency saturation of the offline embedder")
	fl.Float64Var(&f.b, "b", bm25.DefaultB, "BM25 length normalisation of the offline embedder, 0 to 1")
	fl.Float64Var(&f.mergeShare, "merge-share", retrieve.DefaultMergeShare, "adaptive: share of a unit's children that must match for the unit to be returned, above 0 and at most 1")
	fl.IntVar(&f.windowSentences, "window-sentences", retrieve.DefaultWindowSentences, "adaptive: sentences each side of a child returned in a window")
	fl.IntVar(&f.half, "half", 0, "score only half 1 or half 2 of the questions (split by a hash of their ids), 0 for all: tune on one half, report on the other")
	fl.StringVar(&f.endpoint, "embedding-endpoint", "", "OpenAI-compatible embeddings endpoint whose vectors every child also gets, beside BM25 (default: BM25 alone)")
	fl.StringVar(&f.model, "embedding-model", "", "embedding model name, with --embedding-endpoint")
	fl.IntVar(&f.dimensions, "embedding-dimensions", 0, "embedding dimensions to request (0: the model's own)")
	fl.StringVar(&f.apiKeyEnv, "embedding-api-key-env", embed.DefaultOpenAIAPIKeyEnv, "environment variable holding the API key")
	f.search.register(cmd)
	fl.StringVar(&f.stores.childIndex, "child-index", "embedded", "where each strategy's children are indexed: "+childIndexNames+" (a table or collection per strategy, dropped after)")
	fl.StringVar(&f.stores.postgresDSN, "postgres-dsn", "", "PostgreSQL with pgvector, with --child-index postgres (default $PARENTRAG_POSTGRES_DSN)")
	fl.StringVar(&f.stores.milvusAddress, "milvus-address", "", "Milvus host:port, with --child-index milvus")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON object per strategy")
	fl.BoolVar(&f.quiet, "quiet", false, "do not log progress")
	return cmd
}

// runEval loads the inputs, runs the evaluation and prints the reports.
func runEval(cmd *cobra.Command, f evalFlags) error {
	if f.corpus == "" || f.queries == "" {
		return fmt.Errorf("--corpus and --queries are required")
	}
	budgets, err := parseBudgets(f.budgets)
	if err != nil {
		return err
	}
	strategies, err := parseStrategies(f.strategies)
	if err != nil {
		return err
	}
	if err := f.checkRetrieval(); err != nil {
		return err
	}
	compiled, err := loadPolicy(f.policyPath)
	if err != nil {
		return err
	}
	corpus, err := eval.LoadCorpus(f.corpus)
	if err != nil {
		return err
	}
	queries, err := eval.LoadQueries(f.queries)
	if err != nil {
		return err
	}
	queries = eval.Half(queries, f.half)
	var qrels eval.Qrels
	if f.qrels != "" {
		if qrels, err = eval.LoadQrels(f.qrels); err != nil {
			return err
		}
	}
	cfg := eval.Config{
		Builder:     compiled.Builder,
		NewEmbedder: f.newEmbedder,
		Budgets:     budgets, MaxParents: f.maxParents, BudgetMaxParents: f.budgetMaxParents, ChildTopK: f.childTopK,
		Aggregation:   retrieve.Aggregation(f.aggregation),
		ContextWeight: float32(f.contextWeight),
		Adaptive:      retrieve.AdaptiveOptions{MergeShare: f.mergeShare, WindowSentences: f.windowSentences},
	}
	var opts retrieve.Options
	if err := f.search.apply(&opts); err != nil {
		return err
	}
	cfg.Search, cfg.Fusion = opts.Search, opts.Fusion
	if f.stores.childIndex != "embedded" && f.endpoint != "" && f.dimensions == 0 {
		return fmt.Errorf("--child-index %s with --embedding-endpoint needs --embedding-dimensions: it sizes the dense column", f.stores.childIndex)
	}
	if cfg.NewStore, err = f.stores.newStore(f.dimensions); err != nil {
		return err
	}
	if !f.quiet {
		cfg.Log = func(format string, args ...any) { fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", args...) }
	}
	reports, err := eval.Run(cmd.Context(), corpus, queries, qrels, strategies, cfg)
	if err != nil {
		return err
	}
	if f.asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		for _, r := range reports {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	printReports(cmd.OutOrStdout(), reports, budgets)
	return nil
}

// newEmbedder is a fresh embedder of each strategy's index: BM25, and
// with --embedding-endpoint the model's vectors beside it.
func (f evalFlags) newEmbedder() (embed.Embedder, error) {
	lex, err := bm25.NewLexical(f.k1, f.b)
	if err != nil || f.endpoint == "" {
		return lex, err
	}
	dense, err := embed.NewOpenAI(embed.OpenAIOptions{Endpoint: f.endpoint, Model: f.model, Dimensions: f.dimensions, APIKeyEnv: f.apiKeyEnv, Concurrency: 4})
	if err != nil {
		return nil, fmt.Errorf("--embedding-endpoint: %w", err)
	}
	return &embed.Hybrid{Lexical: lex, Dense: dense}, nil
}

// parseBudgets reads a comma-separated list of positive word budgets.
func parseBudgets(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--budgets: %q is not a positive number of words", part)
		}
		out = append(out, n)
	}
	sort.Ints(out)
	// A repeated budget would print a repeated column.
	return slices.Compact(out), nil
}

// parseStrategies reads a comma-separated list of known strategies, so a
// misspelt one is refused before any index is built.
func parseStrategies(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		name := strings.TrimSpace(part)
		if !slices.Contains(eval.AllStrategies, name) {
			return nil, fmt.Errorf("--strategy: unknown strategy %q (want %s)", name, strings.Join(eval.AllStrategies, ", "))
		}
		out = append(out, name)
	}
	return out, nil
}

// checkRetrieval refuses retrieval flags out of range, which the core
// would otherwise silently replace by its defaults.
func (f evalFlags) checkRetrieval() error {
	switch retrieve.Aggregation(f.aggregation) {
	case retrieve.AggregateMax, retrieve.AggregateMean, retrieve.AggregateSum:
	default:
		return fmt.Errorf("--aggregation %q: want Max, Mean or Sum", f.aggregation)
	}
	if f.maxParents < 1 || f.budgetMaxParents < 1 || f.childTopK < 1 {
		return fmt.Errorf("--max-parents, --budget-max-parents and --child-top-k must be at least 1")
	}
	if f.mergeShare <= 0 || f.mergeShare > 1 || f.windowSentences < 0 || f.half < 0 || f.half > 2 {
		return fmt.Errorf("--merge-share must be above 0 and at most 1, --window-sentences at least 0, --half 0, 1 or 2")
	}
	if _, err := bm25.NewLexical(f.k1, f.b); err != nil {
		return fmt.Errorf("--k1 %v --b %v: %w", f.k1, f.b, err)
	}
	return nil
}

// printReports prints one row per strategy: answer-in-context at each
// budget, and evidence-in-context when the queries have evidence.
func printReports(w io.Writer, reports []eval.Report, budgets []int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := []string{"strategy", "queries", "nDCG@10", "R@100", "hit@1", "hit@5", "MRR@10"}
	for _, b := range budgets {
		header = append(header, fmt.Sprintf("AiC@%d", b))
	}
	evidence := slices.ContainsFunc(reports, func(r eval.Report) bool { return len(r.EvidenceInContext) > 0 })
	if evidence {
		for _, b := range budgets {
			header = append(header, fmt.Sprintf("EiC@%d", b))
		}
	}
	header = append(header, "AiC@def", "words", "index s", "p50 ms", "p99 ms")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range reports {
		row := []string{r.Strategy, strconv.Itoa(r.Queries), num(r.NDCG10), num(r.Recall100), num(r.Hit1), num(r.Hit5), num(r.MRR10)}
		row = append(row, shares(r.AnswerInContext, budgets)...)
		if evidence {
			row = append(row, shares(r.EvidenceInContext, budgets)...)
		}
		row = append(row, num(r.AnswerInDefault), fmt.Sprintf("%.0f", r.DefaultWords), fmt.Sprintf("%.2f", r.IndexSeconds), fmt.Sprintf("%.3f", r.QueryP50Ms), fmt.Sprintf("%.3f", r.QueryP99Ms))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// shares formats a share per budget.
func shares(m map[string]float64, budgets []int) []string {
	out := make([]string, len(budgets))
	for i, b := range budgets {
		out[i] = fmt.Sprintf("%.3f", m[strconv.Itoa(b)])
	}
	return out
}

// num formats an optional metric.
func num(f *float64) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *f)
}
