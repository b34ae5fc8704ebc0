package indexer

import (
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// Unit is everything a build derives from one document alone: its parents
// and children, its opening section, and, when the embedder has a BM25
// part, the analysis of each child's embedded text and of each parent's
// context. Corpus statistics and vectors are computed from units, so a
// unit never needs its document again and can be kept between builds (see
// UnitCache).
type Unit struct {
	Parents  []hierarchy.Parent
	Children []hierarchy.Child
	// Ancestors are the units of the levels above the parents, kept in
	// the parent store beside them but neither embedded nor given a
	// context (see hierarchy.Result).
	Ancestors []hierarchy.Parent
	// LeadText and LeadEnd are the document's opening section (see leadOf).
	LeadText string
	LeadEnd  int
	// ChildTerms analyses childText of each child, in order; nil when the
	// build has no BM25 part.
	ChildTerms []bm25.Analysis
	// ContextTerms analyses contextText of each parent, in order; nil
	// without a BM25 part or without context.
	ContextTerms []bm25.Analysis
	// packed holds ChildTerms and ContextTerms encoded (see
	// encodeAnalyses) while a build waits to embed the unit: a third of
	// their size in memory.
	packed []byte
}

// unitShape says what a unit holds beyond the split: analyses or not, and
// contexts or not. It is part of every unit's cache key.
type unitShape struct {
	analysed, contexts bool
}

// newUnit splits doc and analyses what shape asks for: each text once.
func newUnit(doc hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, scratch *bm25.AnalysisScratch) *Unit {
	res := b.Build(doc)
	l := leadOf(doc, res.Parents)
	u := &Unit{Parents: res.Parents, Children: res.Children, Ancestors: res.Ancestors, LeadText: l.text, LeadEnd: l.end}
	if shape.analysed {
		analyse(u, shape.contexts, isProse(doc), scratch)
	}
	return u
}

// stored counts the units of u the parent store holds: its parents and
// its ancestors.
func (u *Unit) stored() int { return len(u.Parents) + len(u.Ancestors) }

// lead returns the unit's opening section.
func (u *Unit) lead() lead { return lead{text: u.LeadText, end: u.LeadEnd} }

// contextText is the context of the unit's i-th parent.
func (u *Unit) contextText(i int) string { return contextText(&u.Parents[i], u.lead()) }

// childTexts returns what is embedded for each child of the unit: its
// text, after the heading of its section when its parent has a heading
// path, so that a child is found by the words of the heading it sits under.
func (u *Unit) childTexts() []string {
	headings := u.headings()
	texts := make([]string, len(u.Children))
	for i, c := range u.Children {
		texts[i] = childText(c, headings[c.ParentID])
	}
	return texts
}

// headings maps each parent id of the unit to the last heading of its
// heading path, when it has one.
func (u *Unit) headings() map[string]string {
	headings := map[string]string{}
	for _, p := range u.Parents {
		if n := len(p.HeadingPath); n > 0 {
			headings[p.ID] = p.HeadingPath[n-1]
		}
	}
	return headings
}

// childText is the embedded text of child c under a section heading ("" for
// none).
func childText(c hierarchy.Child, heading string) string {
	if heading != "" {
		return heading + "\n\n" + c.Text
	}
	return c.Text
}

// parentIndex maps each parent id of the unit to its position.
func (u *Unit) parentIndex() map[string]int {
	out := make(map[string]int, len(u.Parents))
	for i, p := range u.Parents {
		out[p.ID] = i
	}
	return out
}
