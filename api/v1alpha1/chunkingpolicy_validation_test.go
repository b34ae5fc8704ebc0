package v1alpha1

import (
	"strings"
	"testing"
)

func TestValidateAccepts(t *testing.T) {
	tests := []struct {
		name string
		spec ChunkingPolicySpec
	}{
		{"empty spec (all defaults)", ChunkingPolicySpec{}},
		{"every default spelled out", ChunkingPolicySpec{
			Strategy: StrategyParentChild, LengthUnit: LengthCharacters, Tokenizer: TokenizerCL100K,
			Separators: &Separators{Preset: SeparatorsDefault},
			Parent:     &ChunkSize{ChunkSize: 1500}, Child: &ChunkSize{ChunkSize: 300, ChunkOverlap: 30},
			Window: &Window{Sentences: 2},
		}},
		{"smallest sizes", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 2, ChunkOverlap: 1}, Child: &ChunkSize{ChunkSize: 1}}},
		{"largest size", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: MaxChunkSize}}},
		{"window 0", ChunkingPolicySpec{Strategy: StrategySentenceWindow, Window: &Window{Sentences: 0}}},
		{"window 10", ChunkingPolicySpec{Strategy: StrategySentenceWindow, Window: &Window{Sentences: 10}}},
		{"tokens o200k", ChunkingPolicySpec{LengthUnit: LengthTokens, Tokenizer: TokenizerO200K,
			Parent: &ChunkSize{ChunkSize: 400}, Child: &ChunkSize{ChunkSize: 80, ChunkOverlap: 10}}},
		{"markdown preset", ChunkingPolicySpec{Separators: &Separators{Preset: SeparatorsMarkdown}}},
		{"section parents", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 1500, Boundaries: BoundariesSections, MinChunkSize: 200}}},
		{"recursive parents with a minimum", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 1500, Boundaries: BoundariesRecursive, MinChunkSize: 1499}}},
		{"custom literal separators", ChunkingPolicySpec{Separators: &Separators{Custom: []string{"(", "\n", ""}}}},
		{"custom regex separators", ChunkingPolicySpec{Separators: &Separators{Custom: []string{`\n#{1,6} `, `\s+`, ""}, Regex: true}}},
		{"32 custom separators", ChunkingPolicySpec{Separators: &Separators{Custom: make([]string, MaxCustomSeparators)}}},
		{"separator of 256 multi-byte characters", ChunkingPolicySpec{Separators: &Separators{Custom: []string{strings.Repeat("é", MaxSeparatorLength)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.spec.Validate(); err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
		})
	}
}

func TestValidateRefuses(t *testing.T) {
	tests := []struct {
		name string
		spec ChunkingPolicySpec
		// want lists substrings of the error, field paths first.
		want []string
	}{
		{"child size 0", ChunkingPolicySpec{Child: &ChunkSize{ChunkSize: 0}},
			[]string{"spec.child.chunkSize", "must be at least 1"}},
		{"parent size 0", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 0}, Child: &ChunkSize{ChunkSize: 1}},
			[]string{"spec.parent.chunkSize", "must be at least 1"}},
		{"negative size", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: -5}},
			[]string{"spec.parent.chunkSize", "-5", "must be at least 1"}},
		{"size above the maximum", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: MaxChunkSize + 1}},
			[]string{"spec.parent.chunkSize", "must be at most 1000000"}},
		{"negative overlap", ChunkingPolicySpec{Child: &ChunkSize{ChunkSize: 100, ChunkOverlap: -1}},
			[]string{"spec.child.chunkOverlap", "must not be negative"}},
		{"overlap equal to size", ChunkingPolicySpec{Child: &ChunkSize{ChunkSize: 100, ChunkOverlap: 100}},
			[]string{"spec.child.chunkOverlap", "chunkOverlap must be smaller than chunkSize"}},
		{"overlap above size", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 1000, ChunkOverlap: 1001}},
			[]string{"spec.parent.chunkOverlap", "chunkOverlap must be smaller than chunkSize"}},
		{"child equal to parent", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 300}, Child: &ChunkSize{ChunkSize: 300}},
			[]string{"spec.child.chunkSize", "smaller than parent.chunkSize (300)"}},
		{"child above default parent", ChunkingPolicySpec{Child: &ChunkSize{ChunkSize: 2000}},
			[]string{"spec.child.chunkSize", "smaller than parent.chunkSize (1500)"}},
		{"unknown boundaries", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 1500, Boundaries: "Headings"}},
			[]string{"spec.parent.boundaries", `"Headings"`, "Recursive", "Sections"}},
		{"minChunkSize equal to chunkSize", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 1500, MinChunkSize: 1500}},
			[]string{"spec.parent.minChunkSize", "minChunkSize 1500 must be smaller than chunkSize 1500"}},
		{"negative minChunkSize", ChunkingPolicySpec{Parent: &ChunkSize{ChunkSize: 1500, MinChunkSize: -1}},
			[]string{"spec.parent.minChunkSize", "must not be negative"}},
		{"boundaries under child", ChunkingPolicySpec{Child: &ChunkSize{ChunkSize: 300, Boundaries: BoundariesSections}},
			[]string{"spec.child", "apply to parents only"}},
		{"sections with sentence windows", ChunkingPolicySpec{Strategy: StrategySentenceWindow, Parent: &ChunkSize{ChunkSize: 1500, Boundaries: BoundariesSections}},
			[]string{"spec.parent.boundaries", "needs strategy ParentChild"}},
		{"window 11", ChunkingPolicySpec{Strategy: StrategySentenceWindow, Window: &Window{Sentences: 11}},
			[]string{"spec.window.sentences", "11", "must be between 0 and 10"}},
		{"window -1", ChunkingPolicySpec{Strategy: StrategySentenceWindow, Window: &Window{Sentences: -1}},
			[]string{"spec.window.sentences", "-1", "must be between 0 and 10"}},
		{"unknown strategy", ChunkingPolicySpec{Strategy: "Flat"},
			[]string{"spec.strategy", `"Flat"`, "ParentChild", "SentenceWindow"}},
		{"strategy in wrong case", ChunkingPolicySpec{Strategy: "parentchild"},
			[]string{"spec.strategy", `"parentchild"`}},
		{"unknown length unit", ChunkingPolicySpec{LengthUnit: "Bytes"},
			[]string{"spec.lengthUnit", `"Bytes"`, "Characters", "Tokens"}},
		{"unknown tokenizer", ChunkingPolicySpec{LengthUnit: LengthTokens, Tokenizer: "gpt2"},
			[]string{"spec.tokenizer", `"gpt2"`, "cl100k_base", "o200k_base"}},
		{"unknown preset", ChunkingPolicySpec{Separators: &Separators{Preset: "HTML"}},
			[]string{"spec.separators.preset", `"HTML"`, "Default", "Markdown"}},
		{"regex without custom", ChunkingPolicySpec{Separators: &Separators{Regex: true}},
			[]string{"spec.separators.custom", "separators.regex needs a custom separator list"}},
		{"invalid regex", ChunkingPolicySpec{Separators: &Separators{Custom: []string{`\n`, `(unclosed`}, Regex: true}},
			[]string{"spec.separators.custom[1]", "(unclosed", "not a valid regular expression"}},
		{"too many custom separators", ChunkingPolicySpec{Separators: &Separators{Custom: make([]string, MaxCustomSeparators+1)}},
			[]string{"spec.separators.custom", "must have at most 32 items"}},
		{"custom separator too long", ChunkingPolicySpec{Separators: &Separators{Custom: []string{"\n", strings.Repeat("x", MaxSeparatorLength+1)}}},
			[]string{"spec.separators.custom[1]", "may not be more than 256 characters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want an error containing %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestValidateInvalidRegexOnlyInRegexMode(t *testing.T) {
	// Without regex, "(unclosed" is a literal separator and valid.
	s := ChunkingPolicySpec{Separators: &Separators{Custom: []string{"(unclosed"}}}
	if err := s.Validate(); err != nil {
		t.Errorf("literal separator refused: %v", err)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	s := ChunkingPolicySpec{
		Strategy:   "Nope",
		LengthUnit: "Lines",
		Child:      &ChunkSize{ChunkSize: 0, ChunkOverlap: -1},
		Window:     &Window{Sentences: 99},
	}
	err := s.Validate()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	for _, path := range []string{"spec.strategy", "spec.lengthUnit", "spec.child.chunkSize", "spec.child.chunkOverlap", "spec.window.sentences"} {
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name %s", err, path)
		}
	}
}

func TestValidateWindowDefaultWhenUnset(t *testing.T) {
	// An unset window is the default 2, valid for either strategy.
	for _, st := range []Strategy{StrategyParentChild, StrategySentenceWindow} {
		s := ChunkingPolicySpec{Strategy: st}
		if err := s.Validate(); err != nil {
			t.Errorf("%s without window: %v", st, err)
		}
	}
}
