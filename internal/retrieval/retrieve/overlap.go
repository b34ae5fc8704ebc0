package retrieve

import (
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// ranked is a group with its resolved parent.
type ranked struct {
	group  group
	parent hierarchy.Parent
}

// mergeOverlapping returns the groups with every run of parents of one
// document that overlap or abut (sentence windows around neighbouring
// hits) joined into one parent covering them all, so no text is returned
// twice. The joined parent keeps the id of its best member, holds every
// member's children and hits, and is scored by agg over those hits; groups
// are then ordered by score, ties by the rank of their best member.
// Parents whose position is unknown are left alone.
func mergeOverlapping(groups []group, parents []hierarchy.Parent, agg Aggregation) ([]group, []hierarchy.Parent) {
	items := make([]ranked, len(groups))
	for i := range groups {
		items[i] = ranked{groups[i], parents[i]}
	}
	merged := make([]bool, len(items))
	for _, run := range overlapRuns(items) {
		acc := items[run[0]]
		for _, j := range run[1:] {
			acc = join(acc, items[j], agg)
		}
		best := slices.Min(run) // groups arrive in rank order
		acc.parent.ID, acc.group.parentID = items[best].parent.ID, items[best].group.parentID
		acc.parent.HeadingPath = items[best].parent.HeadingPath
		for _, j := range run {
			merged[j] = j != best
		}
		items[best] = acc
	}
	var out []ranked
	for i, it := range items {
		if !merged[i] {
			out = append(out, it)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].group.score > out[b].group.score })
	gs, ps := make([]group, len(out)), make([]hierarchy.Parent, len(out))
	for i, it := range out {
		gs[i], ps[i] = it.group, it.parent
	}
	return gs, ps
}

// overlapRuns returns, for each run of two or more parents of one
// document that overlap or abut when sorted by position, the indexes of
// its members in position order.
func overlapRuns(items []ranked) [][]int {
	byDoc := map[string][]int{}
	for i, it := range items {
		if it.parent.Start >= 0 {
			byDoc[it.parent.DocID] = append(byDoc[it.parent.DocID], i)
		}
	}
	var runs [][]int
	for _, idx := range byDoc {
		sort.SliceStable(idx, func(a, b int) bool { return items[idx[a]].parent.Start < items[idx[b]].parent.Start })
		run, end := []int{idx[0]}, parentEnd(items[idx[0]].parent)
		for _, i := range idx[1:] {
			if items[i].parent.Start <= end {
				run, end = append(run, i), max(end, parentEnd(items[i].parent))
				continue
			}
			runs = appendRun(runs, run)
			run, end = []int{i}, parentEnd(items[i].parent)
		}
		runs = appendRun(runs, run)
	}
	return runs
}

// appendRun keeps runs of two or more members.
func appendRun(runs [][]int, run []int) [][]int {
	if len(run) < 2 {
		return runs
	}
	return append(runs, run)
}

// parentEnd is the code-point offset in its document where p ends.
func parentEnd(p hierarchy.Parent) int { return p.Start + utf8.RuneCountInString(p.Text) }

// join returns a, grown to cover b, which starts at or after a's start and
// at or before its end: the union of their texts, children and
// hits (each child once, at its best score), scored by agg.
func join(a, b ranked, agg Aggregation) ranked {
	p := a.parent
	start := a.parent.Start
	p.Text = unionText(a.parent, b.parent)
	p.Pages = a.parent.Pages.Union(b.parent.Pages)
	p.Children = nil
	seen := map[string]bool{}
	for _, q := range []hierarchy.Parent{a.parent, b.parent} {
		for _, s := range q.Children {
			if !seen[s.ID] {
				seen[s.ID] = true
				p.Children = append(p.Children, shiftSpan(s, q.Start-start))
			}
		}
	}
	g := a.group
	g.hits = unionHits(a.group.hits, b.group.hits)
	g.score = aggregate(g.hits, agg)
	return ranked{g, p}
}

// unionText returns the text from a's start to the later end of a and b,
// where b starts inside a or where a ends.
func unionText(a, b hierarchy.Parent) string {
	skip := parentEnd(a) - b.Start // code points of b already in a
	br := []rune(b.Text)
	if skip >= len(br) {
		return a.Text
	}
	return a.Text + string(br[skip:])
}

// shiftSpan moves a child span by delta code points; an unknown span
// stays unknown.
func shiftSpan(s hierarchy.Span, delta int) hierarchy.Span {
	if s.Start >= 0 {
		s.Start += delta
		s.End += delta
	}
	return s
}

// unionHits returns the hits of both lists, each child once at its best
// score, best first.
func unionHits(a, b []index.Hit) []index.Hit {
	best := map[string]int{}
	var out []index.Hit
	for _, h := range append(append([]index.Hit(nil), a...), b...) {
		if i, ok := best[h.ID]; ok {
			if h.Score > out[i].Score {
				out[i] = h
			}
			continue
		}
		best[h.ID] = len(out)
		out = append(out, h)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}
