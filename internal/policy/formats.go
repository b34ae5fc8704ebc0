package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// documentKind is what chooses a document's splitters.
type documentKind struct {
	format   v1alpha1.DocumentFormat
	language v1alpha1.Language
}

// formatByExtension gives the format of documents whose extension names
// no language.
var formatByExtension = map[string]v1alpha1.DocumentFormat{
	".pdf": v1alpha1.FormatPDF, ".docx": v1alpha1.FormatDOCX,
}

// kindOf returns a document's format and language: those its reader
// recorded in its metadata (hierarchy.MetaFormat, hierarchy.MetaLanguage),
// else the language its id's extension names, and the format that follows
// from the language (Markdown, HTML, Code, or Text for rst and latex) or
// the extension; Text when nothing says.
func kindOf(doc hierarchy.Document) documentKind {
	var k documentKind
	lang := doc.Metadata[hierarchy.MetaLanguage]
	if !split.IsLanguage(lang) {
		lang = string(split.LanguageOfPath(doc.ID))
	}
	k.language = v1alpha1.Language(lang)
	if f := v1alpha1.DocumentFormat(doc.Metadata[hierarchy.MetaFormat]); slices.Contains(v1alpha1.DocumentFormats, f) {
		k.format = f
		return k
	}
	switch l := split.Language(lang); {
	case l == split.LanguageMarkdown:
		k.format = v1alpha1.FormatMarkdown
	case l == split.LanguageHTML:
		k.format = v1alpha1.FormatHTML
	case split.IsCode(l):
		k.format = v1alpha1.FormatCode
	default:
		k.format = formatByExtension[strings.ToLower(path.Ext(strings.TrimSuffix(doc.ID, ".gz")))]
	}
	if k.format == "" {
		k.format = v1alpha1.FormatText
	}
	return k
}

// router chooses each document's splitters by its kind. Kinds it does not
// hold use the Builder's own, the policy's settings.
type router struct {
	levels map[documentKind]hierarchy.Levels
}

// Levels returns the splitters of doc's kind: of its format and language,
// else of its format alone.
func (r *router) Levels(doc hierarchy.Document) (hierarchy.Levels, bool) {
	k := kindOf(doc)
	if lv, ok := r.levels[k]; ok {
		return lv, true
	}
	lv, ok := r.levels[documentKind{format: k.format}]
	return lv, ok
}

// newRouter compiles the splitters of every kind whose settings may not be
// the policy's own: each language of code, and each format or language a
// formats rule names.
func newRouter(spec *v1alpha1.ChunkingPolicySpec) (*router, error) {
	r := &router{levels: map[documentKind]hierarchy.Levels{}}
	for _, k := range routedKinds(spec) {
		settings := spec.ForDocument(k.format, k.language)
		lv, err := newLevels(settings.Normalized(), k)
		if err != nil {
			return nil, fmt.Errorf("formats (%s %s): %w", k.format, k.language, err)
		}
		r.levels[k] = lv
	}
	return r, nil
}

// routedKinds lists the kinds that may not split with the policy's own
// settings: every code language, and the formats and languages of rules.
func routedKinds(spec *v1alpha1.ChunkingPolicySpec) []documentKind {
	var out []documentKind
	for _, lang := range split.Languages() {
		if split.IsCode(lang) {
			out = append(out, documentKind{v1alpha1.FormatCode, v1alpha1.Language(lang)})
		}
	}
	for _, rule := range spec.Formats {
		if rule.Match.Format != "" && rule.Match.Format != v1alpha1.FormatCode {
			out = append(out, documentKind{format: rule.Match.Format})
		}
		for _, lang := range rule.Match.Languages {
			if !split.IsCode(split.Language(lang)) {
				out = append(out, documentKind{formatOfLanguage(lang), lang})
			}
		}
	}
	return out
}

// formatOfLanguage is the format of documents in a language that is not
// code: Markdown, HTML, else Text (rst, latex).
func formatOfLanguage(lang v1alpha1.Language) v1alpha1.DocumentFormat {
	switch split.Language(lang) {
	case split.LanguageMarkdown:
		return v1alpha1.FormatMarkdown
	case split.LanguageHTML:
		return v1alpha1.FormatHTML
	}
	return v1alpha1.FormatText
}

// LengthOf returns the length unit in which doc is split, and its
// measure: a formats rule for doc's language or format may set its own
// unit, the policy's applies otherwise.
func (c *Compiled) LengthOf(doc hierarchy.Document) (v1alpha1.LengthUnit, split.LengthFunc, error) {
	k := kindOf(doc)
	settings := c.Spec.ForDocument(k.format, k.language)
	norm := settings.Normalized()
	length, err := LengthFunc(string(norm.LengthUnit), string(norm.Tokenizer))
	return norm.LengthUnit, length, err
}
