package v1alpha1

import (
	"cmp"
	"slices"
	"strings"
)

// DocumentFormats lists every DocumentFormat.
var DocumentFormats = []DocumentFormat{FormatMarkdown, FormatText, FormatHTML, FormatPDF, FormatDOCX, FormatCode}

// Languages lists every Language, in the order of LangChain's enum.
var Languages = []Language{
	"cpp", "go", "java", "kotlin", "js", "ts", "php", "proto", "python", "r", "rst", "ruby", "rust",
	"scala", "swift", "markdown", "latex", "html", "sol", "csharp", "cobol", "c", "lua", "perl",
	"haskell", "elixir", "powershell", "visualbasic6",
}

// RuleFor returns the formats rule that applies to documents of a format
// in a language (empty when not known): the rule naming the language,
// else the one naming the format, else nil.
func (s *ChunkingPolicySpec) RuleFor(format DocumentFormat, language Language) *FormatRule {
	var byFormat *FormatRule
	for i := range s.Formats {
		r := &s.Formats[i]
		if language != "" && slices.Contains(r.Match.Languages, language) {
			return r
		}
		if r.Match.Format != "" && r.Match.Format == format && byFormat == nil {
			byFormat = r
		}
	}
	return byFormat
}

// ForDocument returns the settings that split documents of a format in a
// language: the policy's, with the applying formats rule's on top, and,
// for code that no rule gives separators, its language's separators
// (preset Language). The result has no formats of its own.
func (s *ChunkingPolicySpec) ForDocument(format DocumentFormat, language Language) ChunkingPolicySpec {
	rule := s.RuleFor(format, language)
	out := s.withRule(rule)
	if format == FormatCode && (rule == nil || rule.Separators == nil) {
		out.Separators = &Separators{Preset: SeparatorsLanguage}
	}
	return out
}

// withRule returns the policy's settings with those rule sets on top (the
// policy's own for a nil rule), without formats.
func (s *ChunkingPolicySpec) withRule(rule *FormatRule) ChunkingPolicySpec {
	out := *s
	out.Formats = nil
	if rule == nil {
		return out
	}
	if rule.LengthUnit != "" {
		out.LengthUnit = rule.LengthUnit
	}
	if rule.Tokenizer != "" {
		out.Tokenizer = rule.Tokenizer
	}
	if rule.Separators != nil {
		out.Separators = rule.Separators
	}
	if rule.Parent != nil {
		out.Parent = rule.Parent
	}
	if rule.Child != nil {
		out.Child = rule.Child
	}
	return out
}

// normalizedFormats returns the rules with every setting they inherit made
// explicit and normalised as the policy's own are, in a canonical order
// (rules never overlap, so their order does not change what they do): two
// policies whose rules split alike hash alike. Nil when there are none, so
// a policy without rules keeps the revision it had before rules existed.
func (s *ChunkingPolicySpec) normalizedFormats() []FormatRule {
	if len(s.Formats) == 0 {
		return nil
	}
	out := make([]FormatRule, len(s.Formats))
	for i := range s.Formats {
		r := &s.Formats[i]
		eff := s.withRule(r)
		n := eff.Normalized()
		out[i] = FormatRule{
			Match:      FormatMatch{Format: r.Match.Format, Languages: slices.Sorted(slices.Values(r.Match.Languages))},
			LengthUnit: n.LengthUnit,
			Tokenizer:  n.Tokenizer,
			Parent:     n.Parent,
			Child:      n.Child,
		}
		if r.Separators != nil {
			out[i].Separators = n.Separators
		}
	}
	slices.SortFunc(out, func(a, b FormatRule) int { return cmp.Compare(a.Match.key(), b.Match.key()) })
	return out
}

// key orders matches: by format, then by languages.
func (m FormatMatch) key() string {
	langs := make([]string, len(m.Languages))
	for i, l := range m.Languages {
		langs[i] = string(l)
	}
	return string(m.Format) + "/" + strings.Join(langs, ",")
}
