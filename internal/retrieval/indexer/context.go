package indexer

import (
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// contextText is what a child's context says: its document's title, the
// document's opening section unless the parent starts inside it, its
// parent's heading path, then its parent's text.
func contextText(p *hierarchy.Parent, l lead) string {
	return strings.Join(append(contextHead(p, l), p.Text), contextJoin)
}

// contextJoin separates the parts of a context.
const contextJoin = "\n\n"

// contextHead returns the parts of p's context before p's text.
func contextHead(p *hierarchy.Parent, l lead) []string {
	var parts []string
	if p.Title != "" {
		parts = append(parts, p.Title)
	}
	if l.text != "" && p.Start >= l.end {
		parts = append(parts, l.text)
	}
	if len(p.HeadingPath) > 0 {
		parts = append(parts, strings.Join(p.HeadingPath, HeadingSeparator))
	}
	return parts
}

// HeadingSeparator joins the headings of a heading path in text.
const HeadingSeparator = " > "
