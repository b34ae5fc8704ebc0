package v1alpha1

import (
	"fmt"
	"regexp"
	"slices"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/parentrag/parentrag/internal/chunking"
)

// Limits the CRD schema declares (see the markers in
// chunkingpolicy_types.go); Validate enforces them too.
const (
	// MaxWindowSentences is the largest sentence window on either side.
	MaxWindowSentences = 10
	// MaxChunkSize is the largest chunkSize.
	MaxChunkSize = 1000000
	// MaxCustomSeparators is the most custom separators a policy may list.
	MaxCustomSeparators = 32
	// MaxSeparatorLength is the longest custom separator, in characters.
	MaxSeparatorLength = 256
	// MaxFormatRules is the most formats rules a policy may hold.
	MaxFormatRules = 16
)

// Validate applies the same rules the CRD schema enforces, so a policy read
// from a file is refused with the messages kubectl apply would print. It
// returns nil when the spec is valid.
func (s *ChunkingPolicySpec) Validate() error {
	root := field.NewPath("spec")
	errs := s.validateLevels(root)
	if w := s.GetWindowSentences(); w < 0 || w > MaxWindowSentences {
		errs = append(errs, field.Invalid(root.Child("window", "sentences"), w,
			fmt.Sprintf("must be between 0 and %d", MaxWindowSentences)))
	}
	errs = append(errs, s.validateHierarchy(root)...)
	if len(errs) == 0 {
		// A rule inherits the policy's settings: checked once those hold.
		errs = s.validateFormats(root.Child("formats"))
	}
	return errs.ToAggregate()
}

// validateLevels applies the rules on what makes parents and children
// (enums, separators, sizes, parent boundaries) to the settings of s,
// naming fields under root.
func (s *ChunkingPolicySpec) validateLevels(root *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, s.validateEnums(root)...)
	errs = append(errs, s.validateSeparators(root.Child("separators"))...)
	parent, child := s.GetParent(), s.GetChild()
	errs = append(errs, validateChunkSize(root.Child("parent"), parent)...)
	errs = append(errs, validateChunkSize(root.Child("child"), child)...)
	if child.ChunkSize >= parent.ChunkSize {
		errs = append(errs, field.Invalid(root.Child("child", "chunkSize"), child.ChunkSize,
			fmt.Sprintf("child.chunkSize must be smaller than parent.chunkSize (%d)", parent.ChunkSize)))
	}
	return append(errs, s.validateParentBoundaries(root)...)
}

// validateEnums refuses values outside the declared enums.
func (s *ChunkingPolicySpec) validateEnums(root *field.Path) field.ErrorList {
	var errs field.ErrorList
	if st := s.GetStrategy(); !chunking.Strategy(st).Declared() {
		errs = append(errs, field.NotSupported(root.Child("strategy"), st, chunking.Strategies()))
	}
	if u := s.GetLengthUnit(); u != LengthCharacters && u != LengthTokens {
		errs = append(errs, field.NotSupported(root.Child("lengthUnit"), u,
			[]LengthUnit{LengthCharacters, LengthTokens}))
	}
	if t := s.GetTokenizer(); t != TokenizerCL100K && t != TokenizerO200K {
		errs = append(errs, field.NotSupported(root.Child("tokenizer"), t,
			[]Tokenizer{TokenizerCL100K, TokenizerO200K}))
	}
	return errs
}

// validateSeparators refuses unknown presets, regex mode without custom
// separators and custom regular expressions that do not compile.
func (s *ChunkingPolicySpec) validateSeparators(path *field.Path) field.ErrorList {
	seps := s.GetSeparators()
	var errs field.ErrorList
	if presets := []SeparatorPreset{SeparatorsDefault, SeparatorsMarkdown, SeparatorsLanguage}; !slices.Contains(presets, seps.Preset) {
		errs = append(errs, field.NotSupported(path.Child("preset"), seps.Preset, presets))
	}
	if seps.Regex && len(seps.Custom) == 0 {
		errs = append(errs, field.Required(path.Child("custom"), "separators.regex needs a custom separator list"))
	}
	if n := len(seps.Custom); n > MaxCustomSeparators {
		errs = append(errs, field.TooMany(path.Child("custom"), n, MaxCustomSeparators))
	}
	for i, sep := range seps.Custom {
		if utf8.RuneCountInString(sep) > MaxSeparatorLength {
			errs = append(errs, field.TooLongCharacters(path.Child("custom").Index(i), sep, MaxSeparatorLength))
		}
	}
	if !seps.Regex {
		return errs
	}
	for i, expr := range seps.Custom {
		if _, err := regexp.Compile(expr); err != nil {
			errs = append(errs, field.Invalid(path.Child("custom").Index(i), expr,
				fmt.Sprintf("not a valid regular expression: %v", err)))
		}
	}
	return errs
}

// validateParentBoundaries refuses an unknown boundaries value, a
// minChunkSize that is negative or not smaller than the parents' chunkSize,
// Sections with sentence windows, and either field under child.
func (s *ChunkingPolicySpec) validateParentBoundaries(root *field.Path) field.ErrorList {
	var errs field.ErrorList
	b := s.GetParentBoundaries()
	if b != BoundariesRecursive && b != BoundariesSections {
		errs = append(errs, field.NotSupported(root.Child("parent", "boundaries"), b,
			[]ParentBoundaries{BoundariesRecursive, BoundariesSections}))
	}
	if b == BoundariesSections && s.HasLevel(LevelSection) {
		errs = append(errs, field.Invalid(root.Child("parent", "boundaries"), b,
			"the Section level already cuts documents at their headings: leave parent.boundaries Recursive"))
	}
	if b == BoundariesSections && s.GetStrategy() == StrategySentenceWindow {
		errs = append(errs, field.Invalid(root.Child("parent", "boundaries"), b,
			"parent.boundaries Sections needs strategy ParentChild: sentence windows are not cut at sections"))
	}
	if s.Parent != nil {
		if m := s.Parent.MinChunkSize; m < 0 {
			errs = append(errs, field.Invalid(root.Child("parent", "minChunkSize"), m, "must not be negative"))
		} else if m >= s.Parent.ChunkSize && s.Parent.ChunkSize >= 1 {
			errs = append(errs, field.Invalid(root.Child("parent", "minChunkSize"), m,
				fmt.Sprintf("minChunkSize %d must be smaller than chunkSize %d", m, s.Parent.ChunkSize)))
		}
	}
	if s.Child != nil && (s.Child.Boundaries != "" || s.Child.MinChunkSize != 0) {
		errs = append(errs, field.Forbidden(root.Child("child"),
			"boundaries and minChunkSize apply to parents only: set them under parent, not child"))
	}
	return errs
}

// validateHierarchy refuses levels that are unknown, repeated, out of
// order (largest first), fewer than two or declared with sentence windows,
// section sizes without a Section level or with boundaries or an overlap,
// a Section level beside section parents, and sections no larger than
// parents.
func (s *ChunkingPolicySpec) validateHierarchy(root *field.Path) field.ErrorList {
	var errs field.ErrorList
	path := root.Child("levels")
	if len(s.Levels) > 0 {
		errs = append(errs, validateLevelList(path, s.Levels)...)
		if s.GetStrategy() == StrategySentenceWindow {
			errs = append(errs, field.Invalid(path, s.Levels, "levels need strategy ParentChild: sentence windows have one level of sentences"))
		}
	}
	if s.Section == nil {
		return errs
	}
	sp := root.Child("section")
	if !s.HasLevel(LevelSection) {
		return append(errs, field.Forbidden(sp, "section sizes the Section level: add Section to levels, or remove section"))
	}
	if s.Section.Boundaries != "" || s.Section.ChunkOverlap != 0 {
		errs = append(errs, field.Forbidden(sp, "sections are cut at headings and never overlap: remove section.boundaries and section.chunkOverlap"))
	}
	errs = append(errs, validateChunkSize(sp, s.GetSection())...)
	if sec, parent := s.GetSection().ChunkSize, s.GetParent().ChunkSize; s.HasLevel(LevelParent) && sec <= parent {
		errs = append(errs, field.Invalid(sp.Child("chunkSize"), sec,
			fmt.Sprintf("section.chunkSize %d must be larger than parent.chunkSize %d", sec, parent)))
	}
	if m := s.Section.MinChunkSize; m < 0 || (m >= s.GetSection().ChunkSize && m > 0) {
		errs = append(errs, field.Invalid(sp.Child("minChunkSize"), m,
			fmt.Sprintf("minChunkSize must be at least 0 and smaller than chunkSize %d", s.GetSection().ChunkSize)))
	}
	return errs
}

// validateLevelList refuses a list of levels that names an unknown or a
// repeated level, is not largest first, or has fewer than two or more
// than five.
func validateLevelList(path *field.Path, levels []Level) field.ErrorList {
	var errs field.ErrorList
	if n := len(levels); n < 2 {
		errs = append(errs, field.Invalid(path, levels, "name at least two levels: the smallest is searched, a larger one returned"))
	} else if n > len(AllLevels) {
		errs = append(errs, field.TooMany(path, n, len(AllLevels)))
	}
	last := -1
	for i, l := range levels {
		rank := slices.Index(AllLevels, l)
		switch {
		case rank < 0:
			errs = append(errs, field.NotSupported(path.Index(i), l, AllLevels))
		case slices.Index(levels, l) != i:
			errs = append(errs, field.Duplicate(path.Index(i), l))
		case rank < last:
			errs = append(errs, field.Invalid(path, levels, "levels are listed largest first, in the order Document, Section, Parent, Child, Sentence"))
		}
		last = max(last, rank)
	}
	return errs
}

// validateChunkSize refuses sizes outside [1, MaxChunkSize] and overlaps
// that are negative or not smaller than the size.
func validateChunkSize(path *field.Path, c ChunkSize) field.ErrorList {
	var errs field.ErrorList
	if c.ChunkSize < 1 {
		errs = append(errs, field.Invalid(path.Child("chunkSize"), c.ChunkSize, "must be at least 1"))
	}
	if c.ChunkSize > MaxChunkSize {
		errs = append(errs, field.Invalid(path.Child("chunkSize"), c.ChunkSize, fmt.Sprintf("must be at most %d", MaxChunkSize)))
	}
	if c.ChunkOverlap < 0 {
		errs = append(errs, field.Invalid(path.Child("chunkOverlap"), c.ChunkOverlap, "must not be negative"))
	}
	if c.ChunkOverlap >= c.ChunkSize && c.ChunkSize >= 1 {
		errs = append(errs, field.Invalid(path.Child("chunkOverlap"), c.ChunkOverlap,
			"chunkOverlap must be smaller than chunkSize"))
	}
	return errs
}

// validateFormats refuses more than MaxFormatRules rules, a match that names
// both or neither of a format and languages, a format or a language
// claimed by two rules, a lengthUnit without the sizes counted in it, and
// any rule whose settings, on top of the policy's, break the rules of
// validateLevels.
func (s *ChunkingPolicySpec) validateFormats(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := len(s.Formats); n > MaxFormatRules {
		errs = append(errs, field.TooMany(path, n, MaxFormatRules))
	}
	formats := map[DocumentFormat]bool{}
	languages := map[Language]bool{}
	for i := range s.Formats {
		r := &s.Formats[i]
		at := path.Index(i)
		errs = append(errs, validateMatch(at.Child("match"), r.Match, formats, languages)...)
		if r.LengthUnit != "" && (r.Parent == nil || r.Child == nil) {
			errs = append(errs, field.Required(at.Child("parent"),
				"a formats rule that sets lengthUnit must set parent and child too: their sizes are counted in its unit"))
		}
		rule := s.withRule(r)
		errs = append(errs, rule.validateLevels(at)...)
	}
	return errs
}

// validateMatch refuses a match that names both or neither of a format
// and languages, values outside the enums, and a format or language that
// an earlier rule claimed (recorded in formats and languages).
func validateMatch(path *field.Path, m FormatMatch, formats map[DocumentFormat]bool, languages map[Language]bool) field.ErrorList {
	var errs field.ErrorList
	if (m.Format != "") == (len(m.Languages) > 0) {
		errs = append(errs, field.Invalid(path, m, "match takes a format or languages, not both and not neither"))
	}
	if m.Format != "" {
		if !slices.Contains(DocumentFormats, m.Format) {
			errs = append(errs, field.NotSupported(path.Child("format"), m.Format, DocumentFormats))
		} else if formats[m.Format] {
			errs = append(errs, field.Invalid(path.Child("format"), m.Format, "formats: two rules match the same format; merge them into one"))
		}
		formats[m.Format] = true
	}
	if n := len(m.Languages); n > len(Languages) {
		errs = append(errs, field.TooMany(path.Child("languages"), n, len(Languages)))
	}
	for j, l := range m.Languages {
		switch {
		case !slices.Contains(Languages, l):
			errs = append(errs, field.NotSupported(path.Child("languages").Index(j), l, Languages))
		case languages[l]:
			errs = append(errs, field.Invalid(path.Child("languages").Index(j), l,
				"formats: two rules name the same language; a language may appear in one rule only"))
		}
		languages[l] = true
	}
	return errs
}
