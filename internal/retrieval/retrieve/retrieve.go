// Package retrieve answers a query the parent-child way: children are
// searched, grouped by parent, and their parents returned, fitted to a
// budget, merged where they overlap, reranked or adapted in size. Like the
// rest of internal/retrieval, it imports nothing from Kubernetes.
package retrieve

import (
	"context"
	"fmt"
	"sort"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// Aggregation names how the scores of a parent's hit children combine into
// the parent's score.
type Aggregation string

const (
	// AggregateMax scores a parent by its best child (the default).
	AggregateMax Aggregation = "Max"
	// AggregateMean scores a parent by the mean of its hit children.
	AggregateMean Aggregation = "Mean"
	// AggregateSum scores a parent by the sum of its hit children.
	AggregateSum Aggregation = "Sum"
)

// Defaults of Options.
const (
	DefaultChildTopK  = 20
	DefaultMaxParents = 3
)

// Options tune one retrieval.
type Options struct {
	// ChildTopK is how many children are fetched first (default 20). More
	// are fetched while fewer than MaxParents distinct parents are found.
	ChildTopK int
	// MaxParents caps the parents returned (default 3).
	MaxParents int
	// Aggregation combines child scores into a parent score (default Max).
	Aggregation Aggregation
	// Budget caps the total length of the returned texts, measured by
	// Length; 0 means no cap. A parent that does not fit is trimmed around
	// its hit children rather than dropped.
	Budget int
	// Length measures texts for Budget; nil counts code points.
	Length split.LengthFunc
	// MaxQueryTerms, when positive, refuses a query with more distinct
	// sparse terms after analysis, with an error wrapping
	// ErrQueryTooCostly.
	MaxQueryTerms int
	// MaxPostings, when positive, refuses a query whose terms reach more
	// postings in the child index (see index.SearchRequest).
	MaxPostings int
	// Mode is what a query returns for the children it finds: their
	// parents (ModeParents, the default) or, with ModeAdaptive, the unit
	// of the level that holds enough of the evidence.
	Mode Mode
	// Adaptive tunes ModeAdaptive.
	Adaptive AdaptiveOptions
	// Search chooses which parts of the query's vector search the
	// children: both, fused, when the index has both (the default), or
	// one of them.
	Search SearchMode
	// Fusion tunes how a hybrid search merges its rankings.
	Fusion Fusion
}

// ErrQueryTooCostly marks a query refused by MaxQueryTerms or MaxPostings.
var ErrQueryTooCostly = index.ErrQueryTooCostly

// BudgetTooSmallError is returned when a positive budget is too small to
// hold any text of the best parent found: Need is the length of the
// shortest text that could be returned for it (one word around its best
// match), in the budget's unit.
type BudgetTooSmallError struct {
	Budget, Need int
}

func (e *BudgetTooSmallError) Error() string {
	return fmt.Sprintf("budget %d is too small to hold any text of the best match: the smallest useful budget for this query is %d", e.Budget, e.Need)
}

// withDefaults returns o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.ChildTopK <= 0 {
		o.ChildTopK = DefaultChildTopK
	}
	if o.MaxParents <= 0 {
		o.MaxParents = DefaultMaxParents
	}
	if o.Aggregation == "" {
		o.Aggregation = AggregateMax
	}
	if o.Length == nil {
		o.Length = split.CodePoints
	}
	if o.Mode == "" {
		o.Mode = DefaultMode
	}
	return o
}

// mergeShare returns the share of MergeShare, or its default when it is
// not in (0, 1].
func (a AdaptiveOptions) mergeShare() float64 {
	if a.MergeShare <= 0 || a.MergeShare > 1 {
		return DefaultMergeShare
	}
	return a.MergeShare
}

// Match is a hit child inside a returned parent. Start and End are
// code-point offsets in the parent's full text.
type Match struct {
	ChildID string  `json:"childId"`
	Score   float32 `json:"score"`
	Start   int     `json:"start"`
	End     int     `json:"end"`
	// FoundBy says which searches of a hybrid query found the child:
	// "sparse" (BM25), "dense" (the embedding model) or "both"; it is left
	// out when one search answered the query.
	FoundBy string `json:"foundBy,omitempty"`
}

// Result is one returned parent.
type Result struct {
	ParentID string `json:"parentId"`
	DocID    string `json:"docId"`
	Title    string `json:"title,omitempty"`
	// HeadingPath names the headings the parent falls under, outermost
	// first, when its policy splits parents at sections.
	HeadingPath []string `json:"headingPath,omitempty"`
	// Level names the level the text comes from: parent, or with more
	// levels or ModeAdaptive document, section, child, sentence, or window
	// (sentences cut from the unit ParentID names, or a sentence window).
	Level hierarchy.Level `json:"level"`
	// Pages is the range of pages the parent spans, for a document made of
	// pages (a PDF).
	Pages *hierarchy.Pages `json:"pages,omitempty"`
	Score float32          `json:"score"`
	// Text is the parent's text, or the parts of it kept under a budget
	// (or the windows of ModeAdaptive) joined by Ellipsis.
	Text string `json:"text"`
	// Start is the parent's code-point offset in its document.
	Start int `json:"start"`
	// Trimmed is true when a budget cut Text to Spans of the parent.
	Trimmed bool `json:"trimmed,omitempty"`
	// Spans are the parent-relative code-point ranges Text is made of,
	// when it is not the whole parent.
	Spans []Interval `json:"spans,omitempty"`
	// Matches are the hit children, best first.
	Matches []Match `json:"matches"`
}

// Retriever answers queries from an index: children are searched, hits are
// grouped by parent, and parents are returned.
type Retriever struct {
	Embedder embed.Embedder
	Children index.Searcher
	Parents  parentstore.Reader
	// MergeOverlaps returns parents of one document that overlap or abut
	// once, as one parent covering them. It is set for sentence-window
	// indexes, whose windows overlap by design.
	MergeOverlaps bool
	// Rerank, when set, rescores the first stage's best parents.
	Rerank *Rerank
	// Leaf names the level of the children (child by default), for the
	// answers of ModeAdaptive that return children as they are.
	Leaf hierarchy.Level
}

// Retrieve returns at most MaxParents parents for the query, best first.
// Several children of one parent count once; children are over-fetched
// until MaxParents distinct parents are found or the index is exhausted,
// so a query never silently returns fewer parents than it could. With
// MergeOverlaps, parents of one document that overlap or abut, such as the
// sentence windows of neighbouring hits, are returned once, as one parent
// covering them. Every returned parent exists in the parent store.
func (r *Retriever) Retrieve(ctx context.Context, query string, opts Options) ([]Result, error) {
	q, err := r.Analyze(ctx, query)
	if err != nil {
		return nil, err
	}
	return r.RetrieveQuery(ctx, q, opts)
}

// Query is a question analysed for one index: its vector and what
// searching it costs, known before any child is scanned.
type Query struct {
	// Text is the question as asked, for a reranker.
	Text   string
	Vector vector.Vector
	// Terms is how many distinct sparse terms the question has.
	Terms int
	// Postings is how many postings a search of its sparse part scans in
	// the child index, or -1 when the index cannot tell (Milvus).
	Postings int
}

// Analyze embeds query and measures its cost in the child index, without
// searching it.
func (r *Retriever) Analyze(ctx context.Context, query string) (*Query, error) {
	ectx, span := telemetry.Start(ctx, "parentrag.embed_query")
	qv, err := r.Embedder.EmbedQuery(ectx, query)
	telemetry.Fail(span, err)
	span.End()
	if err != nil {
		return nil, fmt.Errorf("embedding query: %w", err)
	}
	q := &Query{Text: query, Vector: qv, Postings: -1}
	if qv.Sparse != nil {
		q.Terms = len(qv.Sparse.Indices)
	}
	if c, ok := r.Children.(index.PostingsCounter); ok {
		q.Postings = c.Postings(qv)
	}
	return q, nil
}

// CheckCost refuses, with an error wrapping ErrQueryTooCostly, a query
// over MaxQueryTerms or, when its postings are known, over MaxPostings.
func (o Options) CheckCost(q *Query) error {
	switch {
	case o.MaxQueryTerms > 0 && q.Terms > o.MaxQueryTerms:
		return fmt.Errorf("%w: it has %d distinct terms after analysis, over the limit of %d", ErrQueryTooCostly, q.Terms, o.MaxQueryTerms)
	case o.MaxPostings > 0 && q.Postings > o.MaxPostings:
		return fmt.Errorf("%w: its terms have %d postings in the index, over the limit of %d", ErrQueryTooCostly, q.Postings, o.MaxPostings)
	}
	return nil
}

// RetrieveQuery is Retrieve for a query already analysed by Analyze on a
// retriever with the same embedder.
func (r *Retriever) RetrieveQuery(ctx context.Context, q *Query, opts Options) ([]Result, error) {
	opts = opts.withDefaults()
	qv := q.Vector
	if err := opts.CheckCost(q); err != nil {
		return nil, err
	}
	groups, parents, err := r.candidates(ctx, q.Text, qv, opts)
	if err != nil {
		return nil, err
	}
	_, span := telemetry.Start(ctx, "parentrag.budget")
	results := assemble(groups, parents, opts)
	span.End()
	if len(results) == 0 && len(groups) > 0 && opts.Budget > 0 {
		return nil, &BudgetTooSmallError{Budget: opts.Budget, Need: smallestText(groups[0], parents[0], opts)}
	}
	return results, nil
}

// candidates returns the best MaxParents groups with their parents: the
// first stage's, or with Rerank its best TopN rescored and reordered.
func (r *Retriever) candidates(ctx context.Context, query string, qv vector.Vector, opts Options) ([]group, []hierarchy.Parent, error) {
	if r.Rerank == nil || r.Rerank.Reranker == nil {
		return r.resolveGroups(ctx, qv, opts)
	}
	first := opts
	first.MaxParents = r.Rerank.topN(opts)
	groups, parents, err := r.resolveGroups(ctx, qv, first)
	if err != nil {
		return nil, nil, err
	}
	rctx, span := telemetry.Start(ctx, "parentrag.rerank")
	groups, parents = r.Rerank.apply(rctx, query, groups, parents, opts.Aggregation)
	span.End()
	n := min(len(groups), opts.MaxParents)
	return groups[:n], parents[:n], nil
}

// resolveGroups returns the best MaxParents groups with their parents,
// each named by its level: with MergeOverlaps overlapping parents of one
// document merged (see mergeOverlapping), with ModeAdaptive the units
// adapt chooses. When merging leaves fewer than MaxParents, twice as many
// groups are searched, until enough are found or the index has no more.
func (r *Retriever) resolveGroups(ctx context.Context, qv vector.Vector, opts Options) ([]group, []hierarchy.Parent, error) {
	search := opts
	for {
		sctx, span := telemetry.Start(ctx, "parentrag.child_search")
		groups, err := r.searchGroups(sctx, qv, search)
		telemetry.Fail(span, err)
		span.End()
		if err != nil {
			return nil, nil, err
		}
		ids := make([]string, len(groups))
		for i, g := range groups {
			ids[i] = g.parentID
		}
		pctx, span := telemetry.Start(ctx, "parentrag.parent_fetch")
		parents, err := r.Parents.Get(pctx, ids)
		telemetry.Fail(span, err)
		span.End()
		if err != nil {
			return nil, nil, fmt.Errorf("resolving parents: %w", err)
		}
		merged, mergedParents, err := r.merge(ctx, groups, parents, opts)
		if err != nil {
			return nil, nil, err
		}
		exhausted := len(groups) < search.MaxParents || search.MaxParents >= MaxOverFetch
		if len(merged) >= opts.MaxParents || exhausted {
			n := min(len(merged), opts.MaxParents)
			return merged[:n], mergedParents[:n], nil
		}
		search.MaxParents = min(search.MaxParents*2, MaxOverFetch)
	}
}

// merge returns the results of groups and their parents, each group
// named by its level: as they are, each parent's own; with MergeOverlaps
// sentence windows that overlap joined; with ModeAdaptive the units adapt
// chooses.
func (r *Retriever) merge(ctx context.Context, groups []group, parents []hierarchy.Parent, opts Options) ([]group, []hierarchy.Parent, error) {
	switch {
	case r.MergeOverlaps:
		groups, parents = mergeOverlapping(groups, parents, opts.Aggregation)
		for i := range groups {
			groups[i].level = hierarchy.LevelWindow
		}
		return groups, parents, nil
	case opts.Mode == ModeAdaptive:
		return r.adapt(ctx, groups, parents, opts)
	}
	for i := range groups {
		groups[i].level = levelOf(&parents[i])
	}
	return groups, parents, nil
}

// group is a parent with the hits of its children, best first. Once
// resolved it names the level it is returned as and, when it is returned
// as pieces of its parent (windows), their parent-relative extent.
type group struct {
	parentID string
	docID    string
	score    float32
	hits     []index.Hit
	level    hierarchy.Level
	extent   []Interval
}

// groupHits groups hits by parent, scores each parent by agg and orders
// the groups by score, ties by the rank of their best child.
func groupHits(hits []index.Hit, agg Aggregation) []group {
	index := map[string]int{}
	var groups []group
	for _, h := range hits {
		i, ok := index[h.ParentID]
		if !ok {
			i = len(groups)
			index[h.ParentID] = i
			groups = append(groups, group{parentID: h.ParentID, docID: h.DocID})
		}
		groups[i].hits = append(groups[i].hits, h)
	}
	for i := range groups {
		groups[i].score = aggregate(groups[i].hits, agg)
	}
	sort.SliceStable(groups, func(a, b int) bool { return groups[a].score > groups[b].score })
	return groups
}

// aggregate combines the scores of one parent's hits.
func aggregate(hits []index.Hit, agg Aggregation) float32 {
	var sum, best float32
	for i, h := range hits {
		sum += h.Score
		if i == 0 || h.Score > best {
			best = h.Score
		}
	}
	switch agg {
	case AggregateSum:
		return sum
	case AggregateMean:
		return sum / float32(len(hits))
	default:
		return best
	}
}

// MaxOverFetch is the most children one query fetches while looking for
// distinct parents (Milvus's largest top-k). The store says the index is
// exhausted by returning fewer hits than asked for, so no query needs to
// count the children first.
const MaxOverFetch = 16384

// groupedMatches is how many children per parent a grouping search returns
// as the parent's matches.
const groupedMatches = 3

// searchGroups returns the best MaxParents groups. A store that groups by
// parent itself (Milvus) answers in one search when parents are scored by
// their best child and one part of the query is searched; otherwise
// children are fetched, doubling the number, until MaxParents distinct
// parents are found or the index has no more hits. Both ways rank the same
// parents the same way. ModeAdaptive counts the hits beyond a grouping
// search's few per parent, so it always fetches children.
func (r *Retriever) searchGroups(ctx context.Context, qv vector.Vector, opts Options) ([]group, error) {
	qv, fused, err := resolveSearch(qv, opts.Search)
	if err != nil {
		return nil, err
	}
	if grouper, ok := r.Children.(index.ParentGrouper); ok && opts.Aggregation == AggregateMax && opts.Mode != ModeAdaptive && !fused {
		hits, err := grouper.SearchByParent(ctx, index.SearchRequest{Vector: qv, TopK: opts.MaxParents, MaxPostings: opts.MaxPostings}, groupedMatches)
		if err != nil {
			return nil, fmt.Errorf("searching children grouped by parent: %w", err)
		}
		groups := groupHits(hits, opts.Aggregation)
		return groups[:min(len(groups), opts.MaxParents)], nil
	}
	return r.overFetch(ctx, qv, fused, opts)
}

// overFetch searches children, doubling the number fetched until
// MaxParents distinct parents are found or the index has no more hits, and
// returns the best MaxParents groups. A fused query searches each part
// for that many children and fuses them (fusedSearch).
func (r *Retriever) overFetch(ctx context.Context, qv vector.Vector, fused bool, opts Options) ([]group, error) {
	k := min(opts.ChildTopK, MaxOverFetch)
	for {
		hits, exhausted, err := r.searchChildren(ctx, qv, fused, k, opts)
		if err != nil {
			return nil, fmt.Errorf("searching children: %w", err)
		}
		groups := groupHits(hits, opts.Aggregation)
		if len(groups) >= opts.MaxParents || exhausted || k == MaxOverFetch {
			return groups[:min(len(groups), opts.MaxParents)], nil
		}
		k = min(k*2, MaxOverFetch)
	}
}

// searchChildren fetches k children, or with fused k per part, fused; the
// index is exhausted when it had fewer to give.
func (r *Retriever) searchChildren(ctx context.Context, qv vector.Vector, fused bool, k int, opts Options) ([]index.Hit, bool, error) {
	if fused {
		return r.fusedSearch(ctx, qv, k, opts)
	}
	hits, err := r.Children.Search(ctx, index.SearchRequest{Vector: qv, TopK: k, MaxPostings: opts.MaxPostings})
	return hits, len(hits) < k, err
}
