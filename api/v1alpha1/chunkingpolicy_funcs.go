package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/parentrag/parentrag/internal/chunking"
)

// Defaults of a ChunkingPolicySpec, applied in code so that an object read
// from a file behaves exactly like one defaulted by the API server.
const (
	DefaultParentChunkSize    = 1500
	DefaultParentChunkOverlap = 0
	DefaultChildChunkSize     = 300
	DefaultChildChunkOverlap  = 30
	DefaultWindowSentences    = 2
	// DefaultSectionsPerParent is how many times parent.chunkSize the
	// longest section kept whole is, when spec.section leaves it out.
	DefaultSectionsPerParent = 4
)

// DefaultLevels are the two levels of parent-child retrieval.
var DefaultLevels = []Level{LevelParent, LevelChild}

// AllLevels lists every level, largest first: the order spec.levels keeps.
var AllLevels = []Level{LevelDocument, LevelSection, LevelParent, LevelChild, LevelSentence}

// GetStrategy returns the strategy, ParentChild when unset.
func (s *ChunkingPolicySpec) GetStrategy() Strategy {
	if s.Strategy == "" {
		return StrategyParentChild
	}
	return s.Strategy
}

// GetLengthUnit returns the length unit, Characters when unset.
func (s *ChunkingPolicySpec) GetLengthUnit() LengthUnit {
	if s.LengthUnit == "" {
		return LengthCharacters
	}
	return s.LengthUnit
}

// GetTokenizer returns the tokenizer, cl100k_base when unset.
func (s *ChunkingPolicySpec) GetTokenizer() Tokenizer {
	if s.Tokenizer == "" {
		return TokenizerCL100K
	}
	return s.Tokenizer
}

// GetSeparators returns the separators, the Default preset when unset.
func (s *ChunkingPolicySpec) GetSeparators() Separators {
	if s.Separators == nil {
		return Separators{Preset: SeparatorsDefault}
	}
	out := *s.Separators
	if out.Preset == "" {
		out.Preset = SeparatorsDefault
	}
	return out
}

// GetParent returns the parent sizes, 1500/0 when unset.
func (s *ChunkingPolicySpec) GetParent() ChunkSize {
	if s.Parent == nil {
		return ChunkSize{ChunkSize: DefaultParentChunkSize, ChunkOverlap: DefaultParentChunkOverlap}
	}
	return *s.Parent
}

// GetParentBoundaries returns where parents start, Recursive when unset.
func (s *ChunkingPolicySpec) GetParentBoundaries() ParentBoundaries {
	if s.Parent == nil || s.Parent.Boundaries == "" {
		return BoundariesRecursive
	}
	return s.Parent.Boundaries
}

// GetParentMinChunkSize returns the shortest parent that stands alone: the
// declared value, or when unset 0 with Recursive boundaries and a tenth of
// the parents' chunkSize with Sections.
func (s *ChunkingPolicySpec) GetParentMinChunkSize() int {
	if s.Parent != nil && s.Parent.MinChunkSize > 0 {
		return s.Parent.MinChunkSize
	}
	if s.GetParentBoundaries() == BoundariesSections {
		return s.GetParent().ChunkSize / 10
	}
	return 0
}

// GetChild returns the child sizes, 300/30 when unset.
func (s *ChunkingPolicySpec) GetChild() ChunkSize {
	if s.Child == nil {
		return ChunkSize{ChunkSize: DefaultChildChunkSize, ChunkOverlap: DefaultChildChunkOverlap}
	}
	return *s.Child
}

// GetLevels returns the levels documents are split into, largest first:
// [Parent, Child] when unset.
func (s *ChunkingPolicySpec) GetLevels() []Level {
	if len(s.Levels) == 0 {
		return slices.Clone(DefaultLevels)
	}
	return slices.Clone(s.Levels)
}

// HasLevel reports whether documents are split into level l.
func (s *ChunkingPolicySpec) HasLevel(l Level) bool { return slices.Contains(s.GetLevels(), l) }

// GetSection returns the sizes of the Section level: the declared ones,
// with chunkSize four times the parents' and minChunkSize a tenth of
// chunkSize when unset.
func (s *ChunkingPolicySpec) GetSection() ChunkSize {
	var out ChunkSize
	if s.Section != nil {
		out = *s.Section
	}
	if out.ChunkSize == 0 {
		out.ChunkSize = DefaultSectionsPerParent * s.GetParent().ChunkSize
	}
	if out.MinChunkSize == 0 {
		out.MinChunkSize = out.ChunkSize / 10
	}
	return out
}

// GetWindowSentences returns the sentences each side of a hit, 2 when unset.
func (s *ChunkingPolicySpec) GetWindowSentences() int {
	if s.Window == nil {
		return DefaultWindowSentences
	}
	return s.Window.Sentences
}

// Normalized returns a copy of the spec with every default made explicit
// and fields that do not affect the result cleared, so that two specs that
// split alike compare and hash alike.
func (s *ChunkingPolicySpec) Normalized() ChunkingPolicySpec {
	parent, child := s.GetParent(), s.GetChild()
	// Recursive boundaries stay implicit, so that specs written before
	// boundaries existed keep their revision.
	parent.Boundaries, parent.MinChunkSize = "", s.GetParentMinChunkSize()
	if s.GetParentBoundaries() == BoundariesSections {
		parent.Boundaries = BoundariesSections
	}
	seps := s.GetSeparators()
	if len(seps.Custom) > 0 {
		// Custom separators replace the preset, which then splits nothing.
		seps.Preset = ""
		seps.Custom = append([]string(nil), seps.Custom...)
	}
	out := ChunkingPolicySpec{
		Strategy:   s.GetStrategy(),
		LengthUnit: s.GetLengthUnit(),
		Separators: &seps,
		Parent:     &parent,
		Child:      &child,
	}
	if out.LengthUnit == LengthTokens {
		out.Tokenizer = s.GetTokenizer()
	}
	if chunking.Strategy(out.Strategy).Window() {
		out.Window = &Window{Sentences: s.GetWindowSentences()}
	}
	out.Formats = s.normalizedFormats()
	out.Levels, out.Section = s.normalizedLevels()
	return out
}

// normalizedLevels returns the levels and section sizes as a normalised
// spec holds them: none for the default two levels, so that specs written
// before levels existed keep their revision, and section sizes made
// explicit only with a Section level.
func (s *ChunkingPolicySpec) normalizedLevels() ([]Level, *ChunkSize) {
	levels := s.GetLevels()
	if slices.Equal(levels, DefaultLevels) {
		return nil, nil
	}
	if !slices.Contains(levels, LevelSection) {
		return levels, nil
	}
	section := s.GetSection()
	section.Boundaries, section.ChunkOverlap = "", 0
	return levels, &section
}

// Revision returns a stable 16-hex-digit hash of the normalised spec. Specs
// that split documents identically share a revision.
func (s *ChunkingPolicySpec) Revision() string {
	normalized := s.Normalized()
	data, err := json.Marshal(normalized)
	if err != nil {
		// A struct of strings and ints always marshals.
		panic(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
