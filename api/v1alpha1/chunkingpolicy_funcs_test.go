package v1alpha1

import (
	"reflect"
	"regexp"
	"testing"
)

func TestGettersDefault(t *testing.T) {
	var s ChunkingPolicySpec
	if got := s.GetStrategy(); got != StrategyParentChild {
		t.Errorf("GetStrategy() = %q, want ParentChild", got)
	}
	if got := s.GetLengthUnit(); got != LengthCharacters {
		t.Errorf("GetLengthUnit() = %q, want Characters", got)
	}
	if got := s.GetTokenizer(); got != TokenizerCL100K {
		t.Errorf("GetTokenizer() = %q, want cl100k_base", got)
	}
	if got := s.GetSeparators(); !reflect.DeepEqual(got, Separators{Preset: SeparatorsDefault}) {
		t.Errorf("GetSeparators() = %+v, want the Default preset", got)
	}
	if got := s.GetParent(); got != (ChunkSize{ChunkSize: 1500, ChunkOverlap: 0}) {
		t.Errorf("GetParent() = %+v, want 1500/0", got)
	}
	if got := s.GetChild(); got != (ChunkSize{ChunkSize: 300, ChunkOverlap: 30}) {
		t.Errorf("GetChild() = %+v, want 300/30", got)
	}
	if got := s.GetWindowSentences(); got != 2 {
		t.Errorf("GetWindowSentences() = %d, want 2", got)
	}
}

func TestGettersKeepSetValues(t *testing.T) {
	s := ChunkingPolicySpec{
		Strategy: StrategySentenceWindow, LengthUnit: LengthTokens, Tokenizer: TokenizerO200K,
		Separators: &Separators{Custom: []string{"|"}},
		Parent:     &ChunkSize{ChunkSize: 900, ChunkOverlap: 9},
		Child:      &ChunkSize{ChunkSize: 90, ChunkOverlap: 0},
		Window:     &Window{Sentences: 0},
	}
	if s.GetStrategy() != StrategySentenceWindow || s.GetLengthUnit() != LengthTokens || s.GetTokenizer() != TokenizerO200K {
		t.Errorf("enum getters replaced set values: %q %q %q", s.GetStrategy(), s.GetLengthUnit(), s.GetTokenizer())
	}
	if got := s.GetSeparators(); !reflect.DeepEqual(got, Separators{Preset: SeparatorsDefault, Custom: []string{"|"}}) {
		t.Errorf("GetSeparators() = %+v", got)
	}
	if s.Separators.Preset != "" {
		t.Error("GetSeparators modified the spec")
	}
	if s.GetParent() != (ChunkSize{ChunkSize: 900, ChunkOverlap: 9}) || s.GetChild() != (ChunkSize{ChunkSize: 90}) {
		t.Errorf("sizes %+v %+v", s.GetParent(), s.GetChild())
	}
	if got := s.GetWindowSentences(); got != 0 {
		t.Errorf("GetWindowSentences() = %d, want the explicit 0", got)
	}
}

func TestNormalizedMakesDefaultsExplicit(t *testing.T) {
	n := (&ChunkingPolicySpec{}).Normalized()
	want := ChunkingPolicySpec{
		Strategy:   StrategyParentChild,
		LengthUnit: LengthCharacters,
		Separators: &Separators{Preset: SeparatorsDefault},
		Parent:     &ChunkSize{ChunkSize: DefaultParentChunkSize, ChunkOverlap: DefaultParentChunkOverlap},
		Child:      &ChunkSize{ChunkSize: DefaultChildChunkSize, ChunkOverlap: DefaultChildChunkOverlap},
	}
	if !reflect.DeepEqual(n, want) {
		t.Errorf("Normalized() = %+v, want %+v", n, want)
	}
	sw := (&ChunkingPolicySpec{Strategy: StrategySentenceWindow, LengthUnit: LengthTokens}).Normalized()
	if sw.Window == nil || sw.Window.Sentences != DefaultWindowSentences {
		t.Errorf("SentenceWindow normalised window %+v, want %d", sw.Window, DefaultWindowSentences)
	}
	if sw.Tokenizer != TokenizerCL100K {
		t.Errorf("Tokens normalised tokenizer %q, want cl100k_base", sw.Tokenizer)
	}
}

func TestNormalizedDoesNotAlias(t *testing.T) {
	s := ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 1000}, Separators: &Separators{Preset: SeparatorsMarkdown}}
	n := s.Normalized()
	n.Parent.ChunkSize = 1
	n.Separators.Preset = "changed"
	if s.Parent.ChunkSize != 1000 || s.Separators.Preset != SeparatorsMarkdown {
		t.Error("changing the normalised copy changed the spec")
	}
	c := ChunkingPolicySpec{Separators: &Separators{Custom: []string{"a", "b"}}}
	n = c.Normalized()
	n.Separators.Custom[0] = "changed"
	if c.Separators.Custom[0] != "a" {
		t.Error("changing the normalised custom separators changed the spec")
	}
}

func TestNormalizedCustomSeparatorsDropPreset(t *testing.T) {
	s := ChunkingPolicySpec{Separators: &Separators{Preset: SeparatorsMarkdown, Custom: []string{"|"}, Regex: true}}
	got := *s.Normalized().Separators
	want := Separators{Custom: []string{"|"}, Regex: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("normalised separators %+v, want %+v", got, want)
	}
}

func TestRevisionFormat(t *testing.T) {
	rev := (&ChunkingPolicySpec{}).Revision()
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(rev) {
		t.Errorf("Revision() = %q, want 16 hex digits", rev)
	}
	if again := (&ChunkingPolicySpec{}).Revision(); again != rev {
		t.Errorf("Revision() not stable: %s then %s", rev, again)
	}
}

func TestRevisionEqualForEquivalentSpecs(t *testing.T) {
	tests := []struct {
		name string
		a, b ChunkingPolicySpec
	}{
		{"empty vs every default spelled out", ChunkingPolicySpec{}, ChunkingPolicySpec{
			Strategy: StrategyParentChild, LengthUnit: LengthCharacters,
			Separators: &Separators{Preset: SeparatorsDefault},
			Parent:     &ChunkSize{ChunkSize: 1500, ChunkOverlap: 0},
			Child:      &ChunkSize{ChunkSize: 300, ChunkOverlap: 30},
		}},
		{"tokenizer ignored with Characters",
			ChunkingPolicySpec{LengthUnit: LengthCharacters, Tokenizer: TokenizerO200K},
			ChunkingPolicySpec{LengthUnit: LengthCharacters, Tokenizer: TokenizerCL100K}},
		{"tokenizer ignored with default unit",
			ChunkingPolicySpec{Tokenizer: TokenizerO200K}, ChunkingPolicySpec{}},
		{"window ignored with ParentChild",
			ChunkingPolicySpec{Window: &Window{Sentences: 7}}, ChunkingPolicySpec{}},
		{"default tokenizer spelled out with Tokens",
			ChunkingPolicySpec{LengthUnit: LengthTokens}, ChunkingPolicySpec{LengthUnit: LengthTokens, Tokenizer: TokenizerCL100K}},
		{"default window spelled out",
			ChunkingPolicySpec{Strategy: StrategySentenceWindow}, ChunkingPolicySpec{Strategy: StrategySentenceWindow, Window: &Window{Sentences: 2}}},
		{"empty separators vs Default preset",
			ChunkingPolicySpec{Separators: &Separators{}}, ChunkingPolicySpec{Separators: &Separators{Preset: SeparatorsDefault}}},
		{"preset ignored with custom separators",
			ChunkingPolicySpec{Separators: &Separators{Preset: SeparatorsMarkdown, Custom: []string{"\n", " "}}},
			ChunkingPolicySpec{Separators: &Separators{Custom: []string{"\n", " "}}}},
		{"empty custom list vs none",
			ChunkingPolicySpec{Separators: &Separators{Custom: []string{}}}, ChunkingPolicySpec{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a, b := tt.a.Revision(), tt.b.Revision(); a != b {
				t.Errorf("revisions differ: %s vs %s", a, b)
			}
		})
	}
}

func TestRevisionChangesWithEverySetting(t *testing.T) {
	base := func() ChunkingPolicySpec {
		return ChunkingPolicySpec{
			Strategy: StrategySentenceWindow, LengthUnit: LengthTokens, Tokenizer: TokenizerCL100K,
			Separators: &Separators{Preset: SeparatorsDefault},
			Parent:     &ChunkSize{ChunkSize: 1000, ChunkOverlap: 10},
			Child:      &ChunkSize{ChunkSize: 100, ChunkOverlap: 10},
			Window:     &Window{Sentences: 2},
		}
	}
	ref := base()
	refRev := ref.Revision()
	tests := []struct {
		name   string
		change func(*ChunkingPolicySpec)
	}{
		{"strategy", func(s *ChunkingPolicySpec) { s.Strategy = StrategyParentChild }},
		{"length unit", func(s *ChunkingPolicySpec) { s.LengthUnit = LengthCharacters }},
		{"tokenizer", func(s *ChunkingPolicySpec) { s.Tokenizer = TokenizerO200K }},
		{"preset", func(s *ChunkingPolicySpec) { s.Separators.Preset = SeparatorsMarkdown }},
		{"custom separators", func(s *ChunkingPolicySpec) { s.Separators.Custom = []string{"\n"} }},
		{"regex flag", func(s *ChunkingPolicySpec) { s.Separators.Custom, s.Separators.Regex = []string{"x"}, true }},
		{"parent size", func(s *ChunkingPolicySpec) { s.Parent.ChunkSize = 1001 }},
		{"parent overlap", func(s *ChunkingPolicySpec) { s.Parent.ChunkOverlap = 11 }},
		{"child size", func(s *ChunkingPolicySpec) { s.Child.ChunkSize = 101 }},
		{"child overlap", func(s *ChunkingPolicySpec) { s.Child.ChunkOverlap = 11 }},
		{"window", func(s *ChunkingPolicySpec) { s.Window.Sentences = 3 }},
	}
	seen := map[string]string{refRev: "base"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			tt.change(&s)
			rev := s.Revision()
			if prev, dup := seen[rev]; dup {
				t.Errorf("revision %s equals that of %s", rev, prev)
			}
			seen[rev] = tt.name
		})
	}
	if ref.Revision() != refRev {
		t.Error("base revision moved")
	}
	literal, regex := base(), base()
	literal.Separators.Custom = []string{"x"}
	regex.Separators.Custom, regex.Separators.Regex = []string{"x"}, true
	if literal.Revision() == regex.Revision() {
		t.Error("regex flag does not change the revision")
	}
}

func TestParentMinChunkSizeDefaultsWithSections(t *testing.T) {
	tests := []struct {
		name   string
		parent *ChunkSize
		want   int
	}{
		{"no parent", nil, 0},
		{"recursive", &ChunkSize{ChunkSize: 1500}, 0},
		{"sections", &ChunkSize{ChunkSize: 1500, Boundaries: BoundariesSections}, 150},
		{"sections with a minimum", &ChunkSize{ChunkSize: 1500, Boundaries: BoundariesSections, MinChunkSize: 40}, 40},
		{"recursive with a minimum", &ChunkSize{ChunkSize: 1500, MinChunkSize: 40}, 40},
	}
	for _, tt := range tests {
		s := ChunkingPolicySpec{Parent: tt.parent}
		if got := s.GetParentMinChunkSize(); got != tt.want {
			t.Errorf("%s: GetParentMinChunkSize() = %d, want %d", tt.name, got, tt.want)
		}
		if got := s.Normalized().Parent.MinChunkSize; got != tt.want {
			t.Errorf("%s: Normalized().Parent.MinChunkSize = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestRecursiveBoundariesKeepTheRevision(t *testing.T) {
	implicit := ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 1500}}
	explicit := ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 1500, Boundaries: BoundariesRecursive}}
	sections := ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 1500, Boundaries: BoundariesSections}}
	if implicit.Revision() != explicit.Revision() {
		t.Errorf("boundaries Recursive changed the revision: %s != %s", implicit.Revision(), explicit.Revision())
	}
	if implicit.Revision() == sections.Revision() {
		t.Error("boundaries Sections kept the revision of Recursive parents")
	}
}
