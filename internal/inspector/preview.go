package inspector

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/document"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// DefaultName is the name a pasted document is read under when it has
// none: Markdown, as a document of no known format is read.
const DefaultName = "document.md"

// Layout is how one policy cuts a document: its parents and children as
// code-point ranges of the document's text, each with its length in the
// policy's length unit.
type Layout struct {
	// Strategy is the policy's; LengthUnit is the unit the document is
	// measured in (a formats rule may set its own).
	Strategy   string `json:"strategy"`
	LengthUnit string `json:"lengthUnit"`
	// Levels names the policy's levels, largest first; Parents are the
	// second smallest and Children the smallest.
	Levels []string `json:"levels"`
	// Ancestors counts the units of the levels above the parents.
	Ancestors int            `json:"ancestors"`
	Parents   []ParentLayout `json:"parents"`
	Children  []ChildLayout  `json:"children"`
}

// ParentLayout is one parent of a Layout. Start and End are code-point
// offsets in the document's text, [Start, End); both are -1 when the
// parent could not be located in it.
type ParentLayout struct {
	Start       int      `json:"start"`
	End         int      `json:"end"`
	Length      int      `json:"length"`
	HeadingPath []string `json:"headingPath,omitempty"`
}

// ChildLayout is one child of a Layout: Parent is the index of its parent
// in Layout.Parents; Start and End are as in ParentLayout.
type ChildLayout struct {
	Parent int `json:"parent"`
	Start  int `json:"start"`
	End    int `json:"end"`
	Length int `json:"length"`
}

// ErrTooManyUnits is returned by Cut for a policy that cuts a document
// into more parents and children than asked for.
var ErrTooManyUnits = errors.New("too many parents and children")

// previewFormats are the formats a pasted document may be read as: text,
// or HTML converted to Markdown. PDF, Word and JSON Lines files are not
// pasted.
var previewFormats = []document.Format{document.Markdown, document.PlainText, document.RST, document.HTML, document.Code, document.Unknown}

// ReadDocument reads text, a pasted document called name (DefaultName when
// empty), as parentrag reads a file of that name, and returns it with the
// format it was read as: its extension or its content chooses the format, HTML is converted to Markdown, and source
// code knows its language. It refuses text that is not UTF-8, is empty,
// or would be read as a PDF, Word or JSON Lines file.
func ReadDocument(name, text string) (hierarchy.Document, document.Format, error) {
	if name == "" {
		name = DefaultName
	}
	format := document.Detect(name, []byte(text))
	if !isPreviewFormat(format) {
		return hierarchy.Document{}, format, fmt.Errorf("%s reads as %s: the preview takes text, Markdown, reStructuredText, HTML or source code", name, format)
	}
	if format == document.Unknown {
		format = document.Markdown
	}
	docs, err := document.Read(format, name, name, []byte(text))
	if err != nil {
		return hierarchy.Document{}, format, err
	}
	doc := docs[0]
	if hierarchy.IsEmpty(doc.Text) {
		return hierarchy.Document{}, format, errors.New(hierarchy.EmptyMessage(name))
	}
	return doc, format, nil
}

// isPreviewFormat reports whether f is one of previewFormats.
func isPreviewFormat(f document.Format) bool {
	for _, p := range previewFormats {
		if f == p {
			return true
		}
	}
	return false
}

// CompilePolicy parses and compiles a ChunkingPolicy written as
// `parentrag split --policy` reads it, YAML or JSON; blank text is the
// default policy.
func CompilePolicy(text string) (*policy.Compiled, error) {
	p := policy.Default()
	if strings.TrimSpace(text) != "" {
		var err error
		if p, err = policy.Parse([]byte(text)); err != nil {
			return nil, err
		}
	}
	return policy.Compile(&p.Spec)
}

// Cut splits doc with the compiled policy and lays out its parents and
// children over doc's text. It returns ErrTooManyUnits, wrapped with the
// count, when there are more than maxUnits of them together (0: no
// limit), so that what a caller shows stays bounded.
func Cut(doc hierarchy.Document, c *policy.Compiled, maxUnits int) (*Layout, error) {
	unit, length, err := c.LengthOf(doc)
	if err != nil {
		return nil, err
	}
	res := c.Builder.Build(doc)
	if n := len(res.Parents) + len(res.Children); maxUnits > 0 && n > maxUnits {
		return nil, fmt.Errorf("%w: the policy cuts the document into %d parents and children, more than the %d the preview draws; preview a shorter document or larger chunks",
			ErrTooManyUnits, n, maxUnits)
	}
	l := &Layout{
		Strategy: string(c.Spec.Strategy), LengthUnit: string(unit), Levels: levelsOf(c.Spec),
		Ancestors: len(res.Ancestors),
		Parents:   make([]ParentLayout, len(res.Parents)), Children: make([]ChildLayout, len(res.Children)),
	}
	index := make(map[string]int, len(res.Parents))
	for i, p := range res.Parents {
		start, end := extent(p.Start, p.Text)
		l.Parents[i] = ParentLayout{Start: start, End: end, Length: length(p.Text), HeadingPath: p.HeadingPath}
		index[p.ID] = i
	}
	for i, ch := range res.Children {
		start, end := extent(ch.Start, ch.Text)
		l.Children[i] = ChildLayout{Parent: index[ch.ParentID], Start: start, End: end, Length: length(ch.Text)}
	}
	return l, nil
}

// extent is the code-point range of text at start, or -1, -1 when start
// is unknown.
func extent(start int, text string) (int, int) {
	if start < 0 {
		return -1, -1
	}
	return start, start + utf8.RuneCountInString(text)
}

// levelsOf names the levels of a normalised spec, largest first.
func levelsOf(spec v1alpha1.ChunkingPolicySpec) []string {
	switch {
	case len(spec.Levels) > 0:
		out := make([]string, len(spec.Levels))
		for i, l := range spec.Levels {
			out[i] = string(l)
		}
		return out
	case spec.Strategy == v1alpha1.StrategySentenceWindow:
		return []string{"Window", "Sentence"}
	}
	return []string{"Parent", "Child"}
}

// MaxPolicies is how many policies one preview compares.
const MaxPolicies = 2

// PreviewRequest is the body of POST PreviewPath.
type PreviewRequest struct {
	// Name is the document's file name, whose extension chooses its
	// format as a file's would (DefaultName when empty).
	Name string `json:"name,omitempty"`
	// Document is the document's text.
	Document string `json:"document"`
	// Policies are one or two ChunkingPolicies, YAML or JSON as
	// `parentrag split --policy` reads them; a blank one is the default
	// policy.
	Policies []string `json:"policies"`
}

// Preview is the answer to a PreviewRequest: the document as it was read
// and, for each policy in order, how it cuts it.
type Preview struct {
	Name string `json:"name"`
	// Format is the format the document was read as.
	Format string `json:"format"`
	// Text is the document's text as read (HTML converted to Markdown),
	// in which the layouts' offsets count code points.
	Text string `json:"text"`
	// Length is Text's length in code points.
	Length  int      `json:"length"`
	Layouts []Layout `json:"layouts"`
}

// Run reads the request's document and cuts it with each of its policies,
// refusing more than maxUnits parents and children for one policy (0: no
// limit). Every error is about the request: a document that cannot be
// read, a policy that is not valid (named A or B), or one that cuts too
// finely.
func Run(req PreviewRequest, maxUnits int) (*Preview, error) {
	if n := len(req.Policies); n < 1 || n > MaxPolicies {
		return nil, fmt.Errorf("policies: want one or two ChunkingPolicies, got %d", n)
	}
	doc, format, err := ReadDocument(req.Name, req.Document)
	if err != nil {
		return nil, err
	}
	out := &Preview{Name: doc.ID, Format: string(format), Text: doc.Text, Length: utf8.RuneCountInString(doc.Text)}
	for i, text := range req.Policies {
		name := string(rune('A' + i))
		c, err := CompilePolicy(text)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", name, err)
		}
		l, err := Cut(doc, c, maxUnits)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", name, err)
		}
		out.Layouts = append(out.Layouts, *l)
	}
	return out, nil
}
