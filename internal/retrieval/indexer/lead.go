package indexer

import (
	"strings"
	"unicode"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// LeadWords caps the opening section of a document in its children's
// context: an abstract or an introduction fits, a long first chapter is
// cut.
const LeadWords = 300

// lead is the opening section of a document and the code-point offset in
// the document where it ends.
type lead struct {
	text string
	end  int
}

// leadsOf returns the opening section of every document whose parents are
// sections (they carry heading paths): the text before its second heading,
// or before its first when text precedes it, at most LeadWords words. It
// says what the whole document is about, as an abstract does, so it joins
// the context of the children of every later section.
func leadsOf(docs []hierarchy.Document, parents []hierarchy.Parent) map[string]lead {
	sectioned := map[string]bool{}
	for _, p := range parents {
		if len(p.HeadingPath) > 0 {
			sectioned[p.DocID] = true
		}
	}
	headers := split.NewMarkdownHeaderSplitter(split.MarkdownHeaderOptions{Headers: split.MarkdownHeadings()})
	out := map[string]lead{}
	for _, d := range docs {
		if sectioned[d.ID] {
			out[d.ID] = openingSection(d.Text, headers.Headings(d.Text))
		}
	}
	return out
}

// openingSection returns the first non-blank section of text given its
// headings, cut after LeadWords words.
func openingSection(text string, headings []split.Heading) lead {
	runes := []rune(text)
	end := len(runes)
	for _, h := range headings {
		if h.Start > 0 && strings.TrimSpace(string(runes[:h.Start])) != "" {
			end = h.Start
			break
		}
	}
	end = min(end, wordsEnd(runes, LeadWords))
	return lead{text: strings.TrimSpace(string(runes[:end])), end: end}
}

// wordsEnd returns the offset just after the n-th white-space separated
// word of runes, or len(runes) when it has fewer.
func wordsEnd(runes []rune, n int) int {
	words, inWord := 0, false
	for i, r := range runes {
		space := unicode.IsSpace(r)
		if !space && !inWord {
			if words == n {
				return i
			}
			words++
		}
		inWord = !space
	}
	return len(runes)
}
