package retrieve

import (
	"context"
	"sort"

	"go.opentelemetry.io/otel/trace"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// Reranker scores texts against a query, one score per text in order,
// higher meaning more relevant (rerank.Client is one).
type Reranker interface {
	Scores(ctx context.Context, query string, texts []string) ([]float64, error)
}

// RerankTarget names what a reranker scores.
type RerankTarget string

const (
	// RerankParents scores each candidate parent's whole text.
	RerankParents RerankTarget = "Parents"
	// RerankChildren scores each hit child, and parents are scored from
	// their children by the query's aggregation.
	RerankChildren RerankTarget = "Children"
)

// DefaultRerankTopN is how many first-stage parents are rescored.
const DefaultRerankTopN = 20

// Rerank is an optional second stage: the best TopN parents of the first
// stage are rescored by Reranker and reordered before MaxParents are kept.
type Rerank struct {
	Reranker Reranker
	// Target is Parents (default) or Children.
	Target RerankTarget
	// TopN is how many first-stage parents are rescored (default
	// DefaultRerankTopN, at least MaxParents).
	TopN int
	// OnFallback, when set, is called each time the reranker fails; the
	// query then keeps the first-stage order and does not fail.
	OnFallback func(error)
}

// topN is how many parents the first stage must find for opts.
func (rr *Rerank) topN(opts Options) int {
	n := rr.TopN
	if n <= 0 {
		n = DefaultRerankTopN
	}
	return max(n, opts.MaxParents)
}

// apply rescores and reorders groups; on a reranker error it reports the
// error to OnFallback and returns the groups as they were. Groups and
// parents stay index-aligned.
func (rr *Rerank) apply(ctx context.Context, query string, groups []group, parents []hierarchy.Parent, agg Aggregation) ([]group, []hierarchy.Parent) {
	if len(groups) == 0 {
		return groups, parents
	}
	var err error
	var rescored []group
	if rr.Target == RerankChildren {
		rescored, err = rr.rescoreChildren(ctx, query, groups, parents, agg)
	} else {
		rescored, err = rr.rescoreParents(ctx, query, groups, parents)
	}
	if err != nil {
		telemetry.Fail(trace.SpanFromContext(ctx), err)
		if rr.OnFallback != nil {
			rr.OnFallback(err)
		}
		return groups, parents
	}
	order := make([]int, len(rescored))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rescored[order[a]].score > rescored[order[b]].score })
	gs, ps := make([]group, len(order)), make([]hierarchy.Parent, len(order))
	for i, j := range order {
		gs[i], ps[i] = rescored[j], parents[j]
	}
	return gs, ps
}

// rescoreParents scores each parent's text.
func (rr *Rerank) rescoreParents(ctx context.Context, query string, groups []group, parents []hierarchy.Parent) ([]group, error) {
	texts := make([]string, len(parents))
	for i, p := range parents {
		texts[i] = p.Text
	}
	scores, err := rr.Reranker.Scores(ctx, query, texts)
	if err != nil {
		return nil, err
	}
	out := append([]group(nil), groups...)
	for i := range out {
		out[i].score = float32(scores[i])
	}
	return out, nil
}

// rescoreChildren scores every hit child that can be located in its
// parent, replaces the hits' scores (a child that cannot be located ranks
// last) and aggregates each parent's score from them.
func (rr *Rerank) rescoreChildren(ctx context.Context, query string, groups []group, parents []hierarchy.Parent, agg Aggregation) ([]group, error) {
	type ref struct{ group, hit int }
	var texts []string
	var refs []ref
	out := make([]group, len(groups))
	for i, g := range groups {
		out[i] = g
		out[i].hits = append(out[i].hits[:0:0], g.hits...)
		c := newCandidate(g, parents[i])
		for j, h := range g.hits {
			out[i].hits[j].Score = -1e30
			if iv, ok := c.spans[h.ID]; ok {
				texts = append(texts, string(c.textRunes()[iv.Start:iv.End]))
				refs = append(refs, ref{i, j})
			}
		}
	}
	scores, err := rr.Reranker.Scores(ctx, query, texts)
	if err != nil {
		return nil, err
	}
	for k, r := range refs {
		out[r.group].hits[r.hit].Score = float32(scores[k])
	}
	for i := range out {
		sort.SliceStable(out[i].hits, func(a, b int) bool { return out[i].hits[a].Score > out[i].hits[b].Score })
		out[i].score = aggregate(out[i].hits, agg)
	}
	return out, nil
}
