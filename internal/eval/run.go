package eval

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// Strategies that can be evaluated beside each declared chunking strategy
// (which nameOf names): the flat baselines, and adaptive retrieval over
// ParentChild.
const (
	FlatChild  = "flat-child"
	FlatParent = "flat-parent"
	Adaptive   = "adaptive"
)

// AllStrategies lists every strategy, baselines first: the flat ones, each
// declared chunking strategy, then adaptive.
var AllStrategies = allStrategies()

// allStrategies returns the strategies AllStrategies lists.
func allStrategies() []string {
	out := []string{FlatChild, FlatParent}
	for _, s := range chunking.Strategies() {
		out = append(out, nameOf(s))
	}
	return append(out, Adaptive)
}

// nameOf spells a chunking strategy as the evaluation names it, in lower
// case with a hyphen before each word but the first: ParentChild is
// parent-child, SentenceWindow sentence-window.
func nameOf(s chunking.Strategy) string {
	var b strings.Builder
	for i, r := range string(s) {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// rankDepth is how many units are ranked for recall@100.
const rankDepth = 100

// Config tunes an evaluation.
type Config struct {
	// Builder is the compiled policy's builder; its Strategy is overridden
	// per evaluated strategy.
	Builder *hierarchy.Builder
	// NewEmbedder makes a fresh embedder for each strategy's index.
	NewEmbedder func() (embed.Embedder, error)
	// ContextWeight is passed to the indexer for every strategy.
	ContextWeight float32
	// Budgets are the context budgets in words for answer-in-context.
	Budgets []int
	// MaxParents, ChildTopK and Aggregation tune the grouped strategies.
	// BudgetMaxParents caps the parents of a budgeted retrieval, where the
	// budget, not a count, should decide how much context is returned.
	MaxParents       int
	BudgetMaxParents int
	ChildTopK        int
	Aggregation      retrieve.Aggregation
	// Adaptive tunes the adaptive strategy.
	Adaptive retrieve.AdaptiveOptions
	// Search and Fusion choose which vectors a query searches (see
	// retrieve.Options).
	Search retrieve.SearchMode
	Fusion retrieve.Fusion
	// NewStore, when set, gives each strategy's index a child store of
	// its own (a Milvus collection, a Postgres table), filled by the build
	// and finished after it; nil keeps the children in an embedded store.
	NewStore func(ctx context.Context, strategy string) (Store, error)
	// Log, when set, receives one line per finished step.
	Log func(format string, args ...any)
}

// Store is a child store outside the process: built into, then finished
// (indexed and counted) before it is searched, and dropped by Close.
type Store interface {
	index.Searcher
	index.Writer
	Finish(ctx context.Context, children int) error
	Close(ctx context.Context) error
}

// Report is the evaluation of one strategy; its JSON keys are fixed.
type Report struct {
	Strategy        string             `json:"strategy"`
	Queries         int                `json:"queries"`
	NDCG10          *float64           `json:"ndcg@10"`
	Recall100       *float64           `json:"recall@100"`
	Hit1            *float64           `json:"hit@1"`
	Hit5            *float64           `json:"hit@5"`
	MRR10           *float64           `json:"mrr@10"`
	AnswerInContext map[string]float64 `json:"answerInContext"`
	// EvidenceInContext is, per budget, the share of the queries with
	// evidence whose context holds a whole evidence paragraph; empty when
	// no query has evidence.
	EvidenceInContext map[string]float64 `json:"evidenceInContext,omitempty"`
	// AnswerInDefault is the share of the queries with answers whose
	// default retrieval (MaxParents, no budget) holds an answer, and
	// DefaultWords the mean number of words that retrieval returns: how
	// much text a strategy spends on its answers when no budget says.
	AnswerInDefault *float64 `json:"answerInDefault,omitempty"`
	DefaultWords    float64  `json:"defaultWords"`
	IndexSeconds    float64  `json:"indexSeconds"`
	QueryP50Ms      float64  `json:"queryP50Ms"`
	QueryP99Ms      float64  `json:"queryP99Ms"`
}

// Run evaluates each strategy on the corpus. When qrels is not nil only the
// queries it judges are scored, and ranking metrics are reported; otherwise
// they are left out (null).
func Run(ctx context.Context, corpus *Corpus, queries []Query, qrels Qrels, strategies []string, cfg Config) ([]Report, error) {
	if qrels != nil {
		queries = judged(queries, qrels)
	}
	if len(queries) == 0 {
		return nil, fmt.Errorf("no query to evaluate: the qrels judge none of the queries")
	}
	var reports []Report
	for _, s := range strategies {
		r, err := runStrategy(ctx, corpus, queries, qrels, s, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s, err)
		}
		reports = append(reports, r)
	}
	return reports, nil
}

// judged keeps the queries that qrels has judgements for.
func judged(queries []Query, qrels Qrels) []Query {
	var out []Query
	for _, q := range queries {
		if len(qrels[q.ID]) > 0 {
			out = append(out, q)
		}
	}
	return out
}

// splitterFor returns the document splitter of a strategy: b with the
// chunking strategy it names, or with ParentChild for adaptive retrieval
// and, wrapped, the flat baselines.
func splitterFor(strategy string, b *hierarchy.Builder) (hierarchy.DocumentSplitter, error) {
	pc := *b
	pc.Strategy = chunking.ParentChild
	switch strategy {
	case Adaptive:
		return &pc, nil
	case FlatChild:
		return hierarchy.FlatChildren{Builder: &pc}, nil
	case FlatParent:
		return hierarchy.FlatParents{Builder: &pc}, nil
	}
	for _, s := range chunking.Strategies() {
		if nameOf(s) == strategy {
			own := *b
			own.Strategy = s
			return &own, nil
		}
	}
	return nil, fmt.Errorf("unknown strategy %q (want %s)", strategy, strings.Join(AllStrategies, ", "))
}

// queryOutcome is what one query contributed.
type queryOutcome struct {
	ranking  rankingScores
	answered map[int]bool // budget -> answer in context
	evidence map[int]bool // budget -> an evidence paragraph in context
	latency  time.Duration
	// inDefault says whether the default retrieval holds an answer, and
	// defaultWords how many words it returns.
	inDefault    bool
	defaultWords int
}

// runStrategy indexes the corpus for one strategy and scores every query.
func runStrategy(ctx context.Context, corpus *Corpus, queries []Query, qrels Qrels, strategy string, cfg Config) (Report, error) {
	splitter, err := splitterFor(strategy, cfg.Builder)
	if err != nil {
		return Report{}, err
	}
	e, err := cfg.NewEmbedder()
	if err != nil {
		return Report{}, err
	}
	start := time.Now()
	opts := indexer.Options{ContextWeight: cfg.ContextWeight}
	if cfg.NewStore != nil {
		store, err := cfg.NewStore(ctx, strategy)
		if err != nil {
			return Report{}, err
		}
		defer store.Close(context.WithoutCancel(ctx))
		opts.Store = store
	}
	ix, err := indexer.Build(ctx, corpus.Docs, splitter, e, opts)
	if err != nil {
		return Report{}, err
	}
	if store, ok := opts.Store.(Store); ok {
		if err := store.Finish(ctx, ix.ChildCount); err != nil {
			return Report{}, err
		}
	}
	indexSeconds := time.Since(start).Seconds()
	cfg.logf("%s: indexed %d documents into %d parents and %d children in %.2fs", strategy, ix.Documents, len(ix.Parents), len(ix.Children), indexSeconds)
	ev := &evaluator{corpus: corpus, retriever: ix.Retriever(), qrels: qrels, cfg: cfg, grouped: strategy != FlatChild && strategy != FlatParent}
	if strategy == Adaptive {
		ev.mode = retrieve.ModeAdaptive
	}
	outcomes, err := ev.all(ctx, queries)
	if err != nil {
		return Report{}, err
	}
	r := summarize(strategy, queries, outcomes, qrels != nil, cfg.Budgets)
	r.IndexSeconds = indexSeconds
	return r, nil
}

// evaluator scores queries against one strategy's index.
type evaluator struct {
	corpus    *Corpus
	retriever *retrieve.Retriever
	qrels     Qrels
	cfg       Config
	grouped   bool
	mode      retrieve.Mode
}

// all scores every query on GOMAXPROCS workers; outcomes are in query order.
func (ev *evaluator) all(ctx context.Context, queries []Query) ([]queryOutcome, error) {
	out := make([]queryOutcome, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = ev.one(ctx, queries[i])
			}
		}()
	}
	for i := range queries {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// one scores one query: latency of a default retrieval, the ranking of the
// top units, and answer-in-context at each budget.
func (ev *evaluator) one(ctx context.Context, q Query) (queryOutcome, error) {
	var o queryOutcome
	base := retrieve.Options{
		ChildTopK: ev.cfg.ChildTopK, MaxParents: ev.cfg.MaxParents, Aggregation: ev.cfg.Aggregation,
		Mode: ev.mode, Adaptive: ev.cfg.Adaptive, Search: ev.cfg.Search, Fusion: ev.cfg.Fusion,
	}
	start := time.Now()
	analysed, err := ev.retriever.Analyze(ctx, q.Text)
	if err != nil {
		return o, err
	}
	def, err := ev.retriever.RetrieveQuery(ctx, analysed, base)
	if err != nil {
		return o, err
	}
	o.latency = time.Since(start)
	texts := make([]string, len(def))
	for i, r := range def {
		texts[i] = r.Text
		o.defaultWords += wordCount(r.Text)
	}
	o.inDefault = containsAnswer(contextWords(texts, o.defaultWords), q.Answers)
	deep := base
	deep.MaxParents = rankDepth
	ranked, err := ev.retriever.RetrieveQuery(ctx, analysed, deep)
	if err != nil {
		return o, err
	}
	if ev.qrels != nil {
		o.ranking = scoreRanking(ev.rankedIDs(ranked), ev.qrels[q.ID])
	}
	if len(q.Answers) > 0 || len(q.Evidence) > 0 {
		o.answered, o.evidence, err = ev.contexts(ctx, q, analysed, base, ranked)
	}
	return o, err
}

// contexts reports for each budget whether an accepted answer, and
// whether a whole evidence paragraph, is in the context. Flat strategies
// fill the budget with their ranked units in order; grouped ones retrieve
// with the budget, trimming parents around their hit children.
func (ev *evaluator) contexts(ctx context.Context, q Query, analysed *retrieve.Query, base retrieve.Options, ranked []retrieve.Result) (answered, evidence map[int]bool, err error) {
	answered, evidence = make(map[int]bool, len(ev.cfg.Budgets)), make(map[int]bool, len(ev.cfg.Budgets))
	for _, budget := range ev.cfg.Budgets {
		results := ranked
		if ev.grouped {
			opts := base
			opts.Budget, opts.Length = budget, wordCount
			opts.MaxParents = max(ev.cfg.BudgetMaxParents, base.MaxParents)
			if results, err = ev.retriever.RetrieveQuery(ctx, analysed, opts); err != nil {
				return nil, nil, err
			}
		}
		texts := make([]string, len(results))
		for i, r := range results {
			texts[i] = r.Text
		}
		context := contextWords(texts, budget)
		answered[budget] = containsAnswer(context, q.Answers)
		evidence[budget] = containsAnswer(context, q.Evidence)
	}
	return answered, evidence, nil
}

// rankedIDs maps ranked results to judged ids, first occurrence wins. A
// result in a document made of paragraphs names the paragraphs its hit
// children lie in first, then the other paragraphs its text overlaps (its
// spans, when it is pieces of its parent); otherwise it names its
// document.
func (ev *evaluator) rankedIDs(results []retrieve.Result) []string {
	var ids []string
	for _, r := range results {
		paras, ok := ev.corpus.paragraphs[r.DocID]
		if !ok || r.Start < 0 {
			ids = append(ids, r.DocID)
			continue
		}
		for _, m := range r.Matches {
			if m.Start >= 0 {
				ids = append(ids, overlapping(paras, r.Start+m.Start, r.Start+m.End)...)
			}
		}
		spans := r.Spans
		if spans == nil {
			spans = []retrieve.Interval{{Start: 0, End: utf8.RuneCountInString(r.Text)}}
		}
		for _, s := range spans {
			ids = append(ids, overlapping(paras, r.Start+s.Start, r.Start+s.End)...)
		}
	}
	return firstOccurrences(ids)
}

// overlapping returns the ids of the paragraphs that [from, to) overlaps.
func overlapping(paras []paragraph, from, to int) []string {
	var out []string
	for _, p := range paras {
		if p.start < to && from < p.end {
			out = append(out, p.id)
		}
	}
	return out
}

// summarize averages the outcomes into a report.
func summarize(strategy string, queries []Query, outcomes []queryOutcome, ranked bool, budgets []int) Report {
	r := Report{Strategy: strategy, Queries: len(queries)}
	var sum rankingScores
	var latencies []time.Duration
	for _, o := range outcomes {
		sum.ndcg10 += o.ranking.ndcg10
		sum.recall100 += o.ranking.recall100
		sum.hit1 += o.ranking.hit1
		sum.hit5 += o.ranking.hit5
		sum.mrr10 += o.ranking.mrr10
		latencies = append(latencies, o.latency)
	}
	if ranked {
		n := float64(len(outcomes))
		r.NDCG10, r.Recall100, r.Hit1, r.Hit5, r.MRR10 = ptr(sum.ndcg10/n), ptr(sum.recall100/n), ptr(sum.hit1/n), ptr(sum.hit5/n), ptr(sum.mrr10/n)
	}
	r.AnswerInContext = inContextShares(queries, outcomes, budgets,
		func(q Query) bool { return len(q.Answers) > 0 }, func(o queryOutcome) map[int]bool { return o.answered })
	if ev := inContextShares(queries, outcomes, budgets,
		func(q Query) bool { return len(q.Evidence) > 0 }, func(o queryOutcome) map[int]bool { return o.evidence }); len(ev) > 0 {
		r.EvidenceInContext = ev
	}
	r.QueryP50Ms, r.QueryP99Ms = percentile(latencies, 50), percentile(latencies, 99)
	r.AnswerInDefault, r.DefaultWords = defaultAnswers(queries, outcomes)
	return r
}

// defaultAnswers returns the share of the queries with answers whose
// default retrieval holds one (nil when none has answers), and the mean
// words of every query's default retrieval.
func defaultAnswers(queries []Query, outcomes []queryOutcome) (*float64, float64) {
	answered, withAnswers, words := 0, 0, 0
	for i, o := range outcomes {
		words += o.defaultWords
		if len(queries[i].Answers) == 0 {
			continue
		}
		withAnswers++
		if o.inDefault {
			answered++
		}
	}
	meanWords := float64(words) / float64(max(len(outcomes), 1))
	if withAnswers == 0 {
		return nil, meanWords
	}
	return ptr(float64(answered) / float64(withAnswers)), meanWords
}

// inContextShares returns, per budget, the share of the queries that
// count whose outcome says true at that budget; empty when none counts.
func inContextShares(queries []Query, outcomes []queryOutcome, budgets []int, counts func(Query) bool, hits func(queryOutcome) map[int]bool) map[string]float64 {
	out := map[string]float64{}
	n := 0
	found := map[int]int{}
	for i, o := range outcomes {
		if !counts(queries[i]) {
			continue
		}
		n++
		for b, ok := range hits(o) {
			if ok {
				found[b]++
			}
		}
	}
	if n == 0 {
		return out
	}
	for _, b := range budgets {
		out[strconv.Itoa(b)] = float64(found[b]) / float64(n)
	}
	return out
}

func ptr(f float64) *float64 { return &f }

// logf logs through cfg.Log when set.
func (cfg Config) logf(format string, args ...any) {
	if cfg.Log != nil {
		cfg.Log(format, args...)
	}
}
