package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Defaults of a ChunkingPolicySpec, applied in code so that an object read
// from a file behaves exactly like one defaulted by the API server.
const (
	DefaultParentChunkSize    = 1500
	DefaultParentChunkOverlap = 0
	DefaultChildChunkSize     = 300
	DefaultChildChunkOverlap  = 30
	DefaultWindowSentences    = 2
)

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
	if out.Strategy == StrategySentenceWindow {
		out.Window = &Window{Sentences: s.GetWindowSentences()}
	}
	out.Formats = s.normalizedFormats()
	return out
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
