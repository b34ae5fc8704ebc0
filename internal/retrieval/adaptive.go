package retrieval

import (
	"context"
	"fmt"
	"sort"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/vectorstore"
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
)

// Defaults of AdaptiveOptions, chosen on held-out halves of SQuAD and
// QASPER (docs/evaluation.md).
const (
	DefaultMergeShare      = 0.5
	DefaultWindowSentences = 1
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
	// 1, that must hold evidence (a child among the best ChildTopK found)
	// for the unit to be returned in their place (default
	// DefaultMergeShare).
	MergeShare float64
	// WindowSentences is how many sentences each side of its own a child
	// returned in a window gets, within its parent; 0 returns the
	// sentences the child lies in.
	WindowSentences int
}

// adapt turns ranked groups of children and their parents into the units
// ModeAdaptive returns, best first. Evidence is the hits among the best
// ChildTopK that score at least EvidenceFloor times the best one.
// A unit matches when it is evidence or holds some. From each group with
// evidence it climbs: its parent is chosen when at least MergeShare of the
// parent's children match, then the unit above when at least MergeShare
// of its children match, and so on while the share holds. A group whose
// parent is not chosen, or that has no evidence, returns its hit children
// in sentence windows (see sentenceWindows) cut from its parent. Groups
// under one chosen unit, or under a chosen unit of another group, become
// one result: the largest chosen unit above them, with every hit, scored
// by the aggregation; results are then ordered by score, ties by the rank
// of their best group. No text is returned twice.
func (r *Retriever) adapt(ctx context.Context, groups []group, parents []hierarchy.Parent, opts Options) ([]group, []hierarchy.Parent, error) {
	tree, err := r.ancestry(ctx, parents)
	if err != nil {
		return nil, nil, err
	}
	a := adaptation{tree: tree, share: opts.Adaptive.mergeShare(), holds: map[string]bool{}}
	a.markEvidence(groups, opts.ChildTopK)
	chosen := map[string]bool{}
	for i := range groups {
		if u := a.climb(groups[i], &parents[i]); u != nil {
			chosen[u.ID] = true
		}
	}
	var out []ranked
	at := map[string]int{} // result key -> index in out
	for i, g := range groups {
		key, unit := a.target(&parents[i], chosen)
		if j, ok := at[key]; ok {
			out[j].group.hits = unionHits(out[j].group.hits, g.hits)
			continue
		}
		at[key] = len(out)
		if unit == nil {
			out = append(out, r.window(g, parents[i], opts.Adaptive.WindowSentences))
			continue
		}
		g.parentID, g.level = unit.ID, levelOf(unit)
		out = append(out, ranked{group: g, parent: *unit})
	}
	return a.finish(out, opts.Aggregation)
}

// ancestry returns every given parent and every unit above them, by id,
// reading each level above from the parent store in one call.
func (r *Retriever) ancestry(ctx context.Context, parents []hierarchy.Parent) (map[string]*hierarchy.Parent, error) {
	tree := map[string]*hierarchy.Parent{}
	frontier := make([]*hierarchy.Parent, len(parents))
	for i := range parents {
		tree[parents[i].ID] = &parents[i]
		frontier[i] = &parents[i]
	}
	for len(frontier) > 0 {
		var ids []string
		for _, p := range frontier {
			if p.ParentID != "" && tree[p.ParentID] == nil && !containsID(ids, p.ParentID) {
				ids = append(ids, p.ParentID)
			}
		}
		if len(ids) == 0 {
			break
		}
		ups, err := r.Parents.Get(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("resolving the units above parents: %w", err)
		}
		frontier = frontier[:0]
		for i := range ups {
			tree[ups[i].ID] = &ups[i]
			frontier = append(frontier, &ups[i])
		}
	}
	return tree, nil
}

// containsID reports whether ids holds id.
func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// adaptation is the state of one adapt: the units known, the share that
// merges, and which children and units hold evidence.
type adaptation struct {
	tree  map[string]*hierarchy.Parent
	share float64
	holds map[string]bool
}

// markEvidence marks the evidence among the hits of groups (the best
// topK that score at least EvidenceFloor times the best), and every unit
// above each of them, as holding evidence.
func (a *adaptation) markEvidence(groups []group, topK int) {
	var all []vectorstore.Hit
	for _, g := range groups {
		all = append(all, g.hits...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Score > all[j].Score })
	for _, h := range all[:min(len(all), max(topK, 1))] {
		if h.Score < EvidenceFloor*all[0].Score {
			break
		}
		a.holds[h.ID] = true
		for id := h.ParentID; id != "" && !a.holds[id]; {
			a.holds[id] = true
			p := a.tree[id]
			if p == nil {
				break
			}
			id = p.ParentID
		}
	}
}

// matchShare is the share of u's children that hold evidence.
func (a *adaptation) matchShare(u *hierarchy.Parent) float64 {
	if len(u.Children) == 0 {
		return 0
	}
	n := 0
	for _, s := range u.Children {
		if a.holds[s.ID] {
			n++
		}
	}
	return float64(n) / float64(len(u.Children))
}

// climb returns the largest unit chosen for group g of parent p: p when
// it has evidence and enough of its children match, then each unit above
// while enough of its children match; nil when p is not chosen.
func (a *adaptation) climb(g group, p *hierarchy.Parent) *hierarchy.Parent {
	if !a.holds[p.ID] {
		return nil
	}
	var chosen *hierarchy.Parent
	for u := p; u != nil && a.matchShare(u) >= a.share; u = a.tree[u.ParentID] {
		chosen = u
	}
	return chosen
}

// target returns the result a group of parent p joins: the largest chosen
// unit at or above p, keyed by its id, or p's own window (a nil unit).
func (a *adaptation) target(p *hierarchy.Parent, chosen map[string]bool) (string, *hierarchy.Parent) {
	var unit *hierarchy.Parent
	for u := p; u != nil; u = a.tree[u.ParentID] {
		if chosen[u.ID] {
			unit = u
		}
	}
	if unit == nil {
		return "window:" + p.ID, nil
	}
	return unit.ID, unit
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
// document (a hit whose place is unknown is left out).
func (a *adaptation) withHitSpans(unit hierarchy.Parent, hits []vectorstore.Hit) hierarchy.Parent {
	spans := make([]hierarchy.Span, 0, len(hits))
	for _, h := range hits {
		p := a.tree[h.ParentID]
		if p == nil {
			continue
		}
		if p.ID == unit.ID {
			return unit // the unit is the hits' parent: its spans are the children's
		}
		for _, s := range p.Children {
			if s.ID == h.ID && s.Start >= 0 && p.Start >= 0 && unit.Start >= 0 {
				delta := p.Start - unit.Start
				spans = append(spans, hierarchy.Span{ID: s.ID, Start: s.Start + delta, End: s.End + delta})
			}
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
