package indexer

import (
	"strings"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/utf8word"
)

// analyse sets the analyses of u's children and, with contexts, of its
// parents' contexts: exactly those of analysing each childText and
// contextText alone, with each text of the document tokenised once; in
// prose, with what the fenced code blocks of each parent quote blanked
// (see maskQuotesInFences). A
// parent's text is tokenised for its context and for every child cut from
// it between words (see bm25.Tokens.Span); the title, opening section,
// heading paths and headings once for all the unit's parents and
// children that repeat them. A child that is not such a stretch of its
// parent's text is analysed alone; analyse returns how many were.
func analyse(u *Unit, contexts, prose bool, s *bm25.AnalysisScratch) (alone int) {
	a := unitAnalyser{u: u, s: s, headings: u.headings(), memo: map[string]bm25.Tokens{}, prose: prose}
	u.ChildTerms = make([]bm25.Analysis, len(u.Children))
	if contexts {
		u.ContextTerms = make([]bm25.Analysis, len(u.Parents))
	}
	children := make([][]int, len(u.Parents))
	parents := u.parentIndex()
	for i, c := range u.Children {
		p, ok := parents[c.ParentID]
		if !ok {
			u.ChildTerms[i] = s.AnalyzeCounts(a.childText(c, a.headings[c.ParentID]))
			alone++
			continue
		}
		children[p] = append(children[p], i)
	}
	for p := range u.Parents {
		if len(children[p]) > 0 || contexts {
			alone += a.parent(p, children[p], contexts)
		}
	}
	return alone
}

// parent tokenises the text of the unit's p-th parent and analyses its
// children (the unit's children of those indices) and, with contexts,
// its context; it returns how many children it analysed alone.
func (a *unitAnalyser) parent(p int, children []int, contexts bool) (alone int) {
	a.text = a.s.TokenizeScratch(a.masked(a.u.Parents[p].Text))
	cursor := runeCursor{text: a.u.Parents[p].Text}
	for _, i := range children {
		var cut bool
		if a.u.ChildTerms[i], cut = a.child(i, &cursor); !cut {
			alone++
		}
	}
	if contexts {
		a.u.ContextTerms[p] = a.context(p)
	}
	return alone
}

// unitAnalyser analyses the texts of one unit.
type unitAnalyser struct {
	u        *Unit
	s        *bm25.AnalysisScratch
	headings map[string]string      // see Unit.headings
	memo     map[string]bm25.Tokens // the tokens of titles, headings and the opening section
	text     bm25.Tokens            // the tokens of the parent being analysed
	parts    []bm25.Tokens          // context's scratch
	prose    bool                   // blank what fenced code quotes
}

// childText is the embedded text of child c under heading, as analysed.
func (a *unitAnalyser) childText(c hierarchy.Child, heading string) string {
	c.Text = a.masked(c.Text)
	return childText(c, heading)
}

// masked is text as it is analysed: in prose, with what its fenced code
// blocks quote blanked.
func (a *unitAnalyser) masked(text string) string {
	if !a.prose {
		return text
	}
	return maskQuotesInFences(text)
}

// memoised returns the tokens of text, tokenising it the first time.
func (a *unitAnalyser) memoised(text string) bm25.Tokens {
	t, ok := a.memo[text]
	if !ok {
		t = a.s.Tokenize(text)
		a.memo[text] = t
	}
	return t
}

// child returns the analysis of the unit's i-th child, whose parent's
// text is a.text and is read by cursor, and whether it was counted from
// a.text rather than analysed alone.
func (a *unitAnalyser) child(i int, cursor *runeCursor) (bm25.Analysis, bool) {
	c := a.u.Children[i]
	heading := a.headings[c.ParentID]
	if start, ok := cursor.byteOffset(c.ParentStart); ok && strings.HasPrefix(cursor.text[start:], c.Text) {
		if span, ok := a.text.Span(start, start+len(c.Text)); ok {
			if heading == "" {
				return a.s.CountTokens(span), true
			}
			return a.s.CountTokens(a.memoised(heading), span), true
		}
	}
	return a.s.AnalyzeCounts(a.childText(c, heading)), false
}

// context returns the analysis of the context of the unit's p-th parent,
// whose text is a.text.
func (a *unitAnalyser) context(p int) bm25.Analysis {
	a.parts = a.parts[:0]
	for _, part := range contextHead(&a.u.Parents[p], a.u.lead()) {
		a.parts = append(a.parts, a.memoised(part))
	}
	return a.s.CountTokens(append(a.parts, a.text)...)
}

// runeCursor turns code-point offsets into byte offsets of text, walking
// forward from the offset it turned last.
type runeCursor struct {
	text         string
	runes, bytes int
}

// byteOffset returns the byte offset of code point n of text, and false
// when text has fewer or n is negative.
func (c *runeCursor) byteOffset(n int) (int, bool) {
	if n < 0 {
		return 0, false
	}
	if n < c.runes {
		c.runes, c.bytes = 0, 0
	}
	at, passed := utf8word.Skip(c.text, c.bytes, n-c.runes)
	c.bytes, c.runes = at, c.runes+passed
	return c.bytes, c.runes == n
}
