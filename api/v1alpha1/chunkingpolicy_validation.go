package v1alpha1

import (
	"fmt"
	"regexp"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
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
)

// Validate applies the same rules the CRD schema enforces, so a policy read
// from a file is refused with the messages kubectl apply would print. It
// returns nil when the spec is valid.
func (s *ChunkingPolicySpec) Validate() error {
	root := field.NewPath("spec")
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
	errs = append(errs, s.validateParentBoundaries(root)...)
	if w := s.GetWindowSentences(); w < 0 || w > MaxWindowSentences {
		errs = append(errs, field.Invalid(root.Child("window", "sentences"), w,
			fmt.Sprintf("must be between 0 and %d", MaxWindowSentences)))
	}
	return errs.ToAggregate()
}

// validateEnums refuses values outside the declared enums.
func (s *ChunkingPolicySpec) validateEnums(root *field.Path) field.ErrorList {
	var errs field.ErrorList
	if st := s.GetStrategy(); st != StrategyParentChild && st != StrategySentenceWindow {
		errs = append(errs, field.NotSupported(root.Child("strategy"), st,
			[]Strategy{StrategyParentChild, StrategySentenceWindow}))
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
	if seps.Preset != SeparatorsDefault && seps.Preset != SeparatorsMarkdown {
		errs = append(errs, field.NotSupported(path.Child("preset"), seps.Preset,
			[]SeparatorPreset{SeparatorsDefault, SeparatorsMarkdown}))
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
