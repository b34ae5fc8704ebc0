package retrieve

import (
	"sort"
	"strings"
	"unicode"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// Ellipsis joins the kept parts of a trimmed parent.
const Ellipsis = " … "

// Interval is a half-open code-point range [Start, End).
type Interval struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// candidate is one returned parent while its text is being chosen.
type candidate struct {
	group  group
	parent hierarchy.Parent
	runes  []rune              // the parent's text, converted on first use (textRunes)
	spans  map[string]Interval // child id -> span in the parent
	keep   []Interval          // sorted, disjoint; nil means nothing yet
	whole  bool
}

// assemble turns ranked groups and their parents into results. Without a
// budget every parent is returned whole. With one, the total length of the
// texts never exceeds the budget: first the hit children are kept in score
// order while they fit, then parents grow around them in rank order, whole
// when they fit and trimmed to the remaining budget otherwise.
func assemble(groups []group, parents []hierarchy.Parent, opts Options) []Result {
	cands := make([]*candidate, len(groups))
	for i, g := range groups {
		cands[i] = newCandidate(g, parents[i])
	}
	if opts.Budget <= 0 {
		for _, c := range cands {
			c.whole = true
		}
	} else {
		b := &budgeter{cands: cands, opts: opts}
		b.keepHits()
		b.grow()
	}
	var out []Result
	for _, c := range cands {
		if r, ok := c.result(); ok {
			out = append(out, r)
		}
	}
	return out
}

// newCandidate indexes a parent's child spans for its group.
func newCandidate(g group, p hierarchy.Parent) *candidate {
	c := &candidate{group: g, parent: p, spans: map[string]Interval{}}
	for _, s := range p.Children {
		if s.Start >= 0 {
			c.spans[s.ID] = Interval{Start: s.Start, End: s.End}
		}
	}
	return c
}

// textRunes returns the parent's text as code points, converting it on
// first use: a parent returned whole never needs them.
func (c *candidate) textRunes() []rune {
	if c.runes == nil {
		c.runes = []rune(c.parent.Text)
	}
	return c.runes
}

// text returns what the candidate currently contributes.
func (c *candidate) text() string {
	if c.whole && c.group.extent == nil {
		return c.parent.Text
	}
	kept := c.kept()
	parts := make([]string, len(kept))
	for i, iv := range kept {
		parts[i] = string(c.textRunes()[iv.Start:iv.End])
	}
	return strings.Join(parts, Ellipsis)
}

// kept returns the parent-relative intervals the candidate contributes
// when it is not its whole parent: its extent when whole, else what the
// budget kept.
func (c *candidate) kept() []Interval {
	if c.whole {
		return c.group.extent
	}
	return c.keep
}

// result converts the candidate; ok is false when nothing of it was kept.
func (c *candidate) result() (Result, bool) {
	if !c.whole && len(c.keep) == 0 {
		return Result{}, false
	}
	r := Result{
		ParentID: c.parent.ID, DocID: c.parent.DocID, Title: c.parent.Title, HeadingPath: c.parent.HeadingPath,
		Level: c.group.level, Pages: c.parent.Pages, Score: c.group.score, Text: c.text(), Start: c.parent.Start,
	}
	if !c.whole || c.group.extent != nil {
		r.Trimmed = !c.whole
		r.Spans = append([]Interval(nil), c.kept()...)
	}
	for _, h := range c.group.hits {
		m := Match{ChildID: h.ID, Score: h.Score, Start: -1, End: -1, FoundBy: foundBy(h.Found)}
		if iv, ok := c.spans[h.ID]; ok {
			m.Start, m.End = iv.Start, iv.End
		}
		r.Matches = append(r.Matches, m)
	}
	return r, true
}

// budgeter chooses the kept text of every candidate under one budget.
type budgeter struct {
	cands []*candidate
	opts  Options
}

// used returns the total length of everything kept so far.
func (b *budgeter) used() int {
	total := 0
	for _, c := range b.cands {
		if c.whole || len(c.keep) > 0 {
			total += b.opts.Length(c.text())
		}
	}
	return total
}

// fits reports whether the kept texts are within the budget.
func (b *budgeter) fits() bool { return b.used() <= b.opts.Budget }

// keepHits keeps hit children across all candidates in descending score
// order, skipping any that would overflow the budget.
func (b *budgeter) keepHits() {
	type ranked struct {
		c   *candidate
		hit index.Hit
	}
	var all []ranked
	for _, c := range b.cands {
		for _, h := range c.group.hits {
			all = append(all, ranked{c, h})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].hit.Score > all[j].hit.Score })
	for _, r := range all {
		iv, ok := r.c.spans[r.hit.ID]
		if !ok {
			continue
		}
		before := r.c.keep
		r.c.keep = addInterval(before, iv)
		if !b.fits() {
			r.c.keep = before
		}
	}
}

// grow widens candidates in rank order: whole when the parent fits,
// otherwise padded symmetrically around what is kept (or around its best
// hit) as far as the budget allows, and then it stops.
func (b *budgeter) grow() {
	for _, c := range b.cands {
		before := c.keep
		c.whole = true
		if b.fits() {
			continue
		}
		c.whole = false
		c.keep = before
		b.pad(c)
		return
	}
}

// pad widens c's kept intervals by the largest symmetric padding, snapped
// to word boundaries, that keeps the total within the budget.
func (b *budgeter) pad(c *candidate) {
	seeds := c.keep
	if len(seeds) == 0 {
		seeds = c.seed()
	}
	runes := c.textRunes()
	lo, hi := 0, len(runes)
	best := c.keep
	for lo <= hi {
		mid := (lo + hi) / 2
		c.keep = clipIntervals(padIntervals(runes, seeds, mid), c.group.extent)
		if b.fits() {
			best = c.keep
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	c.keep = best
}

// smallestText returns the length, by opts.Length, of the shortest text a
// budget could keep of the parent: the first non-empty padding, snapped to
// words, around its best located hit (or its start), or its whole text when
// no padding yields one.
func smallestText(g group, p hierarchy.Parent, opts Options) int {
	c := newCandidate(g, p)
	seeds := c.seed()
	runes := c.textRunes()
	for pad := 1; pad <= len(runes); pad++ {
		if c.keep = padIntervals(runes, seeds, pad); len(c.keep) > 0 {
			return opts.Length(c.text())
		}
	}
	return opts.Length(p.Text)
}

// seed returns a zero-width interval at the centre of the best located hit,
// or at the parent's start when no hit can be located.
func (c *candidate) seed() []Interval {
	for _, h := range c.group.hits {
		if iv, ok := c.spans[h.ID]; ok {
			mid := (iv.Start + iv.End) / 2
			return []Interval{{mid, mid}}
		}
	}
	return []Interval{{0, 0}}
}

// padIntervals widens every interval by pad code points on each side,
// clipped to the text and snapped inwards to word boundaries, and merges
// overlaps. Empty results are dropped.
func padIntervals(runes []rune, seeds []Interval, pad int) []Interval {
	var out []Interval
	for _, s := range seeds {
		iv := Interval{Start: max(0, s.Start-pad), End: min(len(runes), s.End+pad)}
		iv = snapToWords(runes, iv)
		if iv.End > iv.Start {
			out = addInterval(out, iv)
		}
	}
	return out
}

// clipIntervals returns the parts of the sorted, disjoint list that lie
// within the sorted, disjoint extent; the list as it is for a nil extent.
func clipIntervals(list, extent []Interval) []Interval {
	if extent == nil {
		return list
	}
	var out []Interval
	for _, iv := range list {
		for _, e := range extent {
			if part := (Interval{Start: max(iv.Start, e.Start), End: min(iv.End, e.End)}); part.End > part.Start {
				out = append(out, part)
			}
		}
	}
	return out
}

// snapToWords shrinks iv so that it neither starts nor ends inside a word,
// and trims white space at both ends.
func snapToWords(runes []rune, iv Interval) Interval {
	if iv.Start > 0 && !unicode.IsSpace(runes[iv.Start-1]) {
		for iv.Start < iv.End && !unicode.IsSpace(runes[iv.Start]) {
			iv.Start++
		}
	}
	if iv.End < len(runes) && !unicode.IsSpace(runes[iv.End]) {
		for iv.End > iv.Start && !unicode.IsSpace(runes[iv.End-1]) {
			iv.End--
		}
	}
	for iv.Start < iv.End && unicode.IsSpace(runes[iv.Start]) {
		iv.Start++
	}
	for iv.End > iv.Start && unicode.IsSpace(runes[iv.End-1]) {
		iv.End--
	}
	return iv
}

// addInterval inserts iv into a sorted, disjoint list, merging any
// intervals it overlaps or touches. The input slice is not modified.
func addInterval(list []Interval, iv Interval) []Interval {
	out := make([]Interval, 0, len(list)+1)
	placed := false
	for _, cur := range list {
		switch {
		case cur.End < iv.Start:
			out = append(out, cur)
		case iv.End < cur.Start:
			if !placed {
				out = append(out, iv)
				placed = true
			}
			out = append(out, cur)
		default:
			iv = Interval{Start: min(cur.Start, iv.Start), End: max(cur.End, iv.End)}
		}
	}
	if !placed {
		out = append(out, iv)
	}
	return out
}
