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

// leadOf returns the opening section of doc when its parents are sections
// (they carry heading paths): the text before its second heading, or
// before its first when text precedes it, at most LeadWords words. It says
// what the whole document is about, as an abstract does, so it joins the
// context of the children of every later section. A document split
// otherwise has no lead.
func leadOf(doc hierarchy.Document, parents []hierarchy.Parent) lead {
	for _, p := range parents {
		if len(p.HeadingPath) > 0 {
			return openingSection(doc.Text, leadHeaders.Headings(doc.Text))
		}
	}
	return lead{}
}

// leadHeaders finds the Markdown headings that end an opening section.
var leadHeaders = split.NewMarkdownHeaderSplitter(split.MarkdownHeaderOptions{Headers: split.MarkdownHeadings()})

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
