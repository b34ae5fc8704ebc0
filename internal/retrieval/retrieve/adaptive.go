package retrieve

import (
	"context"
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// Mode names what a query returns for the children it finds.
type Mode string

const (
	// ModeParents returns the parent of every child found, as LangChain's
	// ParentDocumentRetriever does (the default).
	ModeParents Mode = "Parents"
	// ModeAdaptive returns for every child found the smallest unit that
	// holds enough of the evidence: the largest level above it whose units
	// on the way each have at least MergeShare of their children matching,
	// else a window of the sentences it lies in (see adapt).
	ModeAdaptive Mode = "Adaptive"
	// DefaultMode is the mode of a query that names none. It becomes
	// ModeAdaptive only when the adaptive strategy returns answers at
	// least as often as every other at every budget on SQuAD and QASPER
	// (internal/eval TestAdaptiveHeldOut); it does not.
	DefaultMode = ModeParents
)

// Defaults of AdaptiveOptions, chosen on one half of SQuAD and QASPER and
// reported on the other (docs/evaluation.md).
const (
	DefaultMergeShare      = 0.25
	DefaultWindowSentences = 2
	// MaxWindowSentences is the widest window a query may ask for.
	MaxWindowSentences = 10
	// EvidenceFloor is the least share of the best child's score an
	// evidence child scores: a child that matches only by its context
	// (the title, the opening section) counts for nothing.
	EvidenceFloor = 0.5
)

// AdaptiveOptions tune ModeAdaptive.
type AdaptiveOptions struct {
	// MergeShare is the share of a unit's children, from 0 (exclusive) to
	// 1, that must hold evidence for the unit to be returned in their
	// place (default DefaultMergeShare).
	MergeShare float64
	// WindowSentences is how many sentences each side of its own a child
	// returned in a window gets, within its parent; 0 returns the
	// sentences the child lies in.
	WindowSentences int
}

// adapt turns ranked groups of children and their parents into the units
// ModeAdaptive returns, best first. Evidence is the hits among the best
// ChildTopK that score at least EvidenceFloor times the best one; a unit
// holds evidence when one lies in it. From each group with evidence it
// climbs: its parent is chosen when at least MergeShare of the parent's
// children are evidence, then the unit above when at least MergeShare of
// its children hold evidence, and so on while the share holds (units above
// the parents are read from the parent store as the climb reaches them,
// one read per level). A group whose parent is not chosen returns its
// evidence children, or without evidence its best child, in sentence
// windows (see sentenceWindows) cut from its parent. Groups whose parents lie in one
// chosen unit become one result: the largest chosen unit, with every hit,
// scored by the aggregation; results are then ordered by score, ties by
// the rank of their best group. No text is returned twice.
func (r *Retriever) adapt(ctx context.Context, groups []group, parents []hierarchy.Parent, opts Options) ([]group, []hierarchy.Parent, error) {
	a := newAdaptation(groups, parents, opts)
	chosen, err := r.climbAll(ctx, a, parents)
	if err != nil {
		return nil, nil, err
	}
	var out []ranked
	at := map[string]int{} // result key -> index in out
	for i, g := range groups {
		unit := largestHolding(chosen, &parents[i])
		key := "window:" + parents[i].ID
		if unit != nil {
			key = unit.ID
		}
		if j, ok := at[key]; ok {
			out[j].group.hits = unionHits(out[j].group.hits, g.hits)
			continue
		}
		at[key] = len(out)
		if unit == nil {
			out = append(out, r.window(a.windowed(g), parents[i], opts.Adaptive.WindowSentences))
			continue
		}
		g.parentID, g.level = unit.ID, levelOf(unit)
		out = append(out, ranked{group: g, parent: *unit})
	}
	return a.finish(out, opts.Aggregation)
}

// adaptation is the state of one adapt: the share that merges, the
// parents of the groups, the evidence children and where each lies in its
// document.
type adaptation struct {
	share    float64
	parents  map[string]*hierarchy.Parent
	evidence map[string]bool
	places   map[string][]int // document -> the offsets where evidence starts
}

// newAdaptation finds the evidence among the hits of groups (the best
// ChildTopK that score at least EvidenceFloor times the best) and where
// each lies.
func newAdaptation(groups []group, parents []hierarchy.Parent, opts Options) *adaptation {
	a := &adaptation{share: opts.Adaptive.mergeShare(), parents: map[string]*hierarchy.Parent{}, evidence: map[string]bool{}, places: map[string][]int{}}
	for i := range parents {
		a.parents[parents[i].ID] = &parents[i]
	}
	var all []index.Hit
	for _, g := range groups {
		all = append(all, g.hits...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Score > all[j].Score })
	for _, h := range all[:min(len(all), max(opts.ChildTopK, 1))] {
		if h.Score < EvidenceFloor*all[0].Score {
			break
		}
		a.evidence[h.ID] = true
		if p := a.parents[h.ParentID]; p != nil && p.Start >= 0 {
			if s, ok := spanOf(p, h.ID); ok {
				a.places[p.DocID] = append(a.places[p.DocID], p.Start+s.Start)
			}
		}
	}
	return a
}

// windowed returns g with the hits a window shows: its evidence, or its
// best hit when it has none.
func (a *adaptation) windowed(g group) group {
	var kept []index.Hit
	for _, h := range g.hits {
		if a.evidence[h.ID] {
			kept = append(kept, h)
		}
	}
	if len(kept) == 0 && len(g.hits) > 0 {
		kept = g.hits[:1]
	}
	g.hits = kept
	return g
}

// spanOf returns the span of child id in p, when p locates it.
func spanOf(p *hierarchy.Parent, id string) (hierarchy.Span, bool) {
	for _, s := range p.Children {
		if s.ID == id && s.Start >= 0 {
			return s, true
		}
	}
	return hierarchy.Span{}, false
}

// matchShare is the share of u's children that hold evidence: for a
// parent of hit children, those that are evidence; for a larger unit,
// those where some evidence starts.
func (a *adaptation) matchShare(u *hierarchy.Parent) float64 {
	if len(u.Children) == 0 {
		return 0
	}
	n := 0
	_, isParent := a.parents[u.ID]
	for _, s := range u.Children {
		if isParent && a.evidence[s.ID] || !isParent && a.holdsEvidence(u, s) {
			n++
		}
	}
	return float64(n) / float64(len(u.Children))
}

// holdsEvidence reports whether evidence starts in the child of u at span
// s.
func (a *adaptation) holdsEvidence(u *hierarchy.Parent, s hierarchy.Span) bool {
	if u.Start < 0 || s.Start < 0 {
		return false
	}
	for _, at := range a.places[u.DocID] {
		if at >= u.Start+s.Start && at < u.Start+s.End {
			return true
		}
	}
	return false
}

// climbAll returns the largest unit each group's climb chose, once each:
// a parent with evidence whose share of matching children reaches the
// merge share, then each unit above while its share does, the units of
// each level read in one call.
func (r *Retriever) climbAll(ctx context.Context, a *adaptation, parents []hierarchy.Parent) ([]*hierarchy.Parent, error) {
	var climbing []*hierarchy.Parent
	for i := range parents {
		if p := &parents[i]; a.matchShare(p) >= a.share {
			climbing = append(climbing, p)
		}
	}
	var chosen []*hierarchy.Parent
	for len(climbing) > 0 {
		ups, err := r.unitsAbove(ctx, climbing)
		if err != nil {
			return nil, err
		}
		var next []*hierarchy.Parent
		for _, u := range climbing {
			if up := ups[u.ParentID]; up != nil && a.matchShare(up) >= a.share {
				next = append(next, up)
				continue
			}
			chosen = append(chosen, u)
		}
		climbing = uniqueUnits(next)
	}
	return uniqueUnits(chosen), nil
}

// unitsAbove reads the units that hold units, by id, in one call.
func (r *Retriever) unitsAbove(ctx context.Context, units []*hierarchy.Parent) (map[string]*hierarchy.Parent, error) {
	var ids []string
	seen := map[string]bool{}
	for _, u := range units {
		if u.ParentID != "" && !seen[u.ParentID] {
			seen[u.ParentID] = true
			ids = append(ids, u.ParentID)
		}
	}
	out := map[string]*hierarchy.Parent{}
	if len(ids) == 0 {
		return out, nil
	}
	ups, err := r.Parents.Get(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("resolving the units above parents: %w", err)
	}
	for i := range ups {
		out[ups[i].ID] = &ups[i]
	}
	return out, nil
}

// uniqueUnits returns units without repeats, in order.
func uniqueUnits(units []*hierarchy.Parent) []*hierarchy.Parent {
	seen := map[string]bool{}
	var out []*hierarchy.Parent
	for _, u := range units {
		if !seen[u.ID] {
			seen[u.ID] = true
			out = append(out, u)
		}
	}
	return out
}

// largestHolding returns the longest of the chosen units that holds p (of
// its document, from at or before p's start to at or after its end), or
// nil when none does.
func largestHolding(chosen []*hierarchy.Parent, p *hierarchy.Parent) *hierarchy.Parent {
	var best *hierarchy.Parent
	for _, u := range chosen {
		if u.ID == p.ID || holds(u, p) {
			if best == nil || utf8.RuneCountInString(u.Text) > utf8.RuneCountInString(best.Text) {
				best = u
			}
		}
	}
	return best
}

// holds reports whether unit u's text covers p's, in one document.
func holds(u, p *hierarchy.Parent) bool {
	return u.DocID == p.DocID && u.Start >= 0 && p.Start >= 0 && u.Start <= p.Start &&
		p.Start+utf8.RuneCountInString(p.Text) <= u.Start+utf8.RuneCountInString(u.Text)
}

// finish scores each result by agg over its hits, gives each chosen unit
// the spans of its hits (so budgets and matches find them), and orders
// the results by score, ties by rank.
func (a *adaptation) finish(out []ranked, agg Aggregation) ([]group, []hierarchy.Parent, error) {
	for i := range out {
		g := &out[i].group
		g.score = aggregate(g.hits, agg)
		if g.extent == nil {
			out[i].parent = a.withHitSpans(out[i].parent, g.hits)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].group.score > out[j].group.score })
	gs, ps := make([]group, len(out)), make([]hierarchy.Parent, len(out))
	for i, it := range out {
		gs[i], ps[i] = it.group, it.parent
	}
	return gs, ps, nil
}

// withHitSpans returns unit with the spans of the hit children in its
// text, each placed from its parent's span and the parent's offset in the
// document (a hit whose place is unknown is left out). A unit that is the
// hits' parent keeps its own spans.
func (a *adaptation) withHitSpans(unit hierarchy.Parent, hits []index.Hit) hierarchy.Parent {
	if _, isParent := a.parents[unit.ID]; isParent {
		return unit
	}
	spans := make([]hierarchy.Span, 0, len(hits))
	for _, h := range hits {
		p := a.parents[h.ParentID]
		if p == nil || p.Start < 0 || unit.Start < 0 {
			continue
		}
		if s, ok := spanOf(p, h.ID); ok {
			delta := p.Start - unit.Start
			spans = append(spans, hierarchy.Span{ID: s.ID, Start: s.Start + delta, End: s.End + delta})
		}
	}
	unit.Children = spans
	return unit
}

// levelOf names the level of a stored unit: its own, or parent for the
// parents of a two-level hierarchy.
func levelOf(p *hierarchy.Parent) hierarchy.Level {
	if p.Level != "" {
		return p.Level
	}
	return hierarchy.LevelParent
}
