// Package hierarchy turns one document into parents and children with
// deterministic ids: the two levels of small-to-big retrieval.
package hierarchy

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/fieldhash"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// Document is one source document. PageStarts is set for a document made
// of pages (a PDF): the code-point offset in Text at which each page
// starts, page 1 first; the parents of such a document carry their Pages.
type Document struct {
	ID         string            `json:"id"`
	Title      string            `json:"title,omitempty"`
	Text       string            `json:"text"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	PageStarts []int             `json:"pageStarts,omitempty"`
}

// Metadata keys a reader sets on a document to say what it is; a policy
// chooses the document's splitters by them.
const (
	// MetaFormat is the document's format: "Markdown", "Text", "HTML",
	// "PDF", "DOCX" or "Code". Without it the format follows from the
	// language, else from the extension of the document's id.
	MetaFormat = "format"
	// MetaLanguage is the document's language by the names of LangChain's
	// Language enum ("go", "python", "rst"). Without it the language
	// follows from the extension of the document's id.
	MetaLanguage = "language"
)

// IsEmpty reports whether a document's text is empty or only white space:
// such a document has nothing to split or retrieve and is not indexed.
func IsEmpty(text string) bool { return strings.TrimSpace(text) == "" }

// EmptyMessage is the source error reported for an empty document.
func EmptyMessage(id string) string {
	return fmt.Sprintf("document %s is empty (no text but white space): it is not indexed", id)
}

// Parent is a unit returned to the reader: a section of a document, or a
// sentence window. Start is its code-point offset in the document (-1 when
// it could not be located). HeadingPath names the headings it falls under,
// outermost first, when the policy splits parents at sections. Pages is
// the range of pages it spans, for a document made of pages. Children
// lists the spans of its children: of the units one level down.
//
// In a hierarchy of other levels than parents and children, Level names
// the unit's level and ParentID the unit one level up that holds it
// (empty at the largest level); both are empty in the default shape, so
// its units, and their ids, are what they always were.
type Parent struct {
	ID          string            `json:"id"`
	DocID       string            `json:"docId"`
	Title       string            `json:"title,omitempty"`
	HeadingPath []string          `json:"headingPath,omitempty"`
	Level       Level             `json:"level,omitempty"`
	ParentID    string            `json:"parentId,omitempty"`
	Pages       *Pages            `json:"pages,omitempty"`
	Ordinal     int               `json:"ordinal"`
	Text        string            `json:"text"`
	Start       int               `json:"start"`
	Children    []Span            `json:"children,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// Pages is a range of pages, numbered from 1: First to Last, both
// included.
type Pages struct {
	First int `json:"first"`
	Last  int `json:"last"`
}

// PagesOf is the range of pages the text at code-point offset start of a
// document spans, given where the document's pages start (see
// Document.PageStarts); nil when the document has no pages or start is
// unknown (-1).
func PagesOf(pageStarts []int, start int, text string) *Pages {
	if len(pageStarts) == 0 || start < 0 {
		return nil
	}
	end := start + max(utf8.RuneCountInString(text)-1, 0)
	return &Pages{First: pageAt(pageStarts, start), Last: pageAt(pageStarts, end)}
}

// pageAt is the number of the page that holds code-point offset at.
func pageAt(pageStarts []int, at int) int {
	return max(sort.Search(len(pageStarts), func(i int) bool { return pageStarts[i] > at }), 1)
}

// Union is the smallest range that holds both p and q; nil when either is.
func (p *Pages) Union(q *Pages) *Pages {
	if p == nil || q == nil {
		return nil
	}
	return &Pages{First: min(p.First, q.First), Last: max(p.Last, q.Last)}
}

// Span locates a child inside its parent's text, in code points:
// [Start, End). Start is -1 when the child could not be located.
type Span struct {
	ID    string `json:"id"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// Child is a unit that is embedded and searched. Start is its code-point
// offset in the document and ParentStart its offset in the parent's text
// (both -1 when unknown). Ordinal counts children across the document.
type Child struct {
	ID          string `json:"id"`
	ParentID    string `json:"parentId"`
	DocID       string `json:"docId"`
	Ordinal     int    `json:"ordinal"`
	Text        string `json:"text"`
	Start       int    `json:"start"`
	ParentStart int    `json:"parentStart"`
}

// Result is the split of one document: its children (the smallest level,
// searched), their parents (the level above), and in a hierarchy of more
// than two levels the units of the larger levels, each level in document
// order.
type Result struct {
	Parents   []Parent
	Children  []Child
	Ancestors []Parent
}

// Splitter splits text into chunks carrying code-point offsets.
type Splitter interface {
	Split(text string) []split.Chunk
}

// HeadedSplitter is a Splitter that also knows the heading path of each
// chunk; a parent splitter that implements it gives parents their
// HeadingPath.
type HeadedSplitter interface {
	SplitHeaded(text string) []split.HeadedChunk
}

// idLength is the number of hex digits of an id (even: the first
// idLength/2 bytes of the digest): 80 bits, so a collision
// among a billion children is less likely than one in a million.
const idLength = 20

// makeID returns a stable id for a unit of kind k ("p" or "c") from its
// document, the policy revision, its ordinal and its text, hashed in d
// (reset first): the same input always yields the same id. The ids of one
// document share one digest, so an id costs one allocation, its string,
// and the strings are hashed where they lie, without copying them.
func makeID(d *fieldhash.Digest, kind, docID, revision string, ordinal int, text string) string {
	d.Reset()
	d.AddString(kind)
	d.AddString(docID)
	d.AddString(revision)
	d.AddUint(8) // the ordinal, an 8-byte field (its length, then itself), as ids have always hashed it
	d.AddUint(uint64(ordinal))
	d.AddString(text)
	sum := d.Sum()
	var id [idLength]byte
	hex.Encode(id[:], sum[:idLength/2])
	return string(id[:])
}

// offset adds a relative code-point offset to a base offset, keeping -1 for
// an unknown position on either side.
func offset(base, rel int) int {
	if base < 0 || rel < 0 {
		return -1
	}
	return base + rel
}
