package retrieve

import (
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// window returns group g of parent p as ModeAdaptive returns a group
// whose parent is not chosen: the parent, cut to the sentence windows
// around its hit children (see sentenceWindows). Its level is the
// retriever's leaf level when the windows are the hit children exactly,
// else a window.
func (r *Retriever) window(g group, p hierarchy.Parent, sentences int) ranked {
	var hits []Interval
	for _, h := range g.hits {
		for _, s := range p.Children {
			if s.ID == h.ID && s.Start >= 0 {
				hits = addInterval(hits, Interval{Start: s.Start, End: s.End})
			}
		}
	}
	g.extent = sentenceWindows(p.Text, hits, sentences)
	g.level = hierarchy.LevelWindow
	if equalIntervals(g.extent, hits) {
		g.level = r.leafLevel()
	}
	return ranked{group: g, parent: p}
}

// leafLevel names the level of the retriever's children.
func (r *Retriever) leafLevel() hierarchy.Level {
	if r.Leaf != "" {
		return r.Leaf
	}
	return hierarchy.LevelChild
}

// sentenceWindows widens each of the sorted, disjoint intervals hits of
// text to the sentences it lies in, whole, and then n more sentences on
// each side, within text; windows that overlap or touch are joined. A hit
// that holds whole sentences only, with n 0, stays as it is (but for the
// white space around it). Text without sentences (a table, code) keeps
// the hits as they are.
func sentenceWindows(text string, hits []Interval, n int) []Interval {
	if len(hits) == 0 {
		return nil
	}
	sentences := split.Sentences(text)
	ends := make([]int, len(sentences))
	for i, s := range sentences {
		ends[i] = s.Start + len([]rune(s.Text))
	}
	var out []Interval
	for _, h := range hits {
		first, last := -1, -1
		for i, s := range sentences {
			if ends[i] > h.Start && s.Start < h.End {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if first < 0 || sentences[first].Start < 0 {
			out = addInterval(out, h)
			continue
		}
		first, last = max(0, first-n), min(len(sentences)-1, last+n)
		w := Interval{Start: min(sentences[first].Start, h.Start), End: max(ends[last], h.End)}
		out = addInterval(out, w)
	}
	return out
}

// equalIntervals reports whether a and b hold the same intervals.
func equalIntervals(a, b []Interval) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
