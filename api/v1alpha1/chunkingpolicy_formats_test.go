package v1alpha1

import (
	"reflect"
	"strings"
	"testing"
)

func TestValidateAcceptsFormats(t *testing.T) {
	tests := []struct {
		name string
		spec ChunkingPolicySpec
	}{
		{"code in tokens", ChunkingPolicySpec{Formats: []FormatRule{{
			Match: FormatMatch{Format: FormatCode}, LengthUnit: LengthTokens,
			Parent: &ChunkSize{ChunkSize: 400, Boundaries: BoundariesSections}, Child: &ChunkSize{ChunkSize: 100},
		}}}},
		{"a language and a format", ChunkingPolicySpec{Formats: []FormatRule{
			{Match: FormatMatch{Languages: []Language{"go", "python"}}, Parent: &ChunkSize{ChunkSize: 3000}},
			{Match: FormatMatch{Format: FormatCode}, Separators: &Separators{Preset: SeparatorsDefault}},
			{Match: FormatMatch{Format: FormatMarkdown}, Separators: &Separators{Preset: SeparatorsMarkdown}},
		}}},
		{"language preset everywhere", ChunkingPolicySpec{Separators: &Separators{Preset: SeparatorsLanguage}}},
		{"rule inherits a small child", ChunkingPolicySpec{Child: &ChunkSize{ChunkSize: 50},
			Formats: []FormatRule{{Match: FormatMatch{Format: FormatPDF}, Parent: &ChunkSize{ChunkSize: 100}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.spec.Validate(); err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
		})
	}
}

// invalidFormatSpecs are policies whose formats rules cannot work, with
// what the refusal must say.
func invalidFormatSpecs() []struct {
	name string
	spec ChunkingPolicySpec
	want []string
} {
	code := FormatMatch{Format: FormatCode}
	return []struct {
		name string
		spec ChunkingPolicySpec
		want []string
	}{
		{"match names nothing", ChunkingPolicySpec{Formats: []FormatRule{{Parent: &ChunkSize{ChunkSize: 900}}}},
			[]string{"spec.formats[0].match", "match takes a format or languages, not both and not neither"}},
		{"match names both", ChunkingPolicySpec{Formats: []FormatRule{{Match: FormatMatch{Format: FormatCode, Languages: []Language{"go"}}}}},
			[]string{"spec.formats[0].match", "match takes a format or languages, not both and not neither"}},
		{"two rules for one format", ChunkingPolicySpec{Formats: []FormatRule{{Match: code}, {Match: code}}},
			[]string{"spec.formats[1].match.format", "two rules match the same format"}},
		{"two rules for one language", ChunkingPolicySpec{Formats: []FormatRule{
			{Match: FormatMatch{Languages: []Language{"go"}}}, {Match: FormatMatch{Languages: []Language{"python", "go"}}}}},
			[]string{"spec.formats[1].match.languages[1]", "a language may appear in one rule only"}},
		{"unit without sizes", ChunkingPolicySpec{Formats: []FormatRule{{Match: code, LengthUnit: LengthTokens}}},
			[]string{"spec.formats[0].parent", "must set parent and child too"}},
		{"inherited child not smaller than the rule's parent", ChunkingPolicySpec{Formats: []FormatRule{{Match: code, Parent: &ChunkSize{ChunkSize: 200}}}},
			[]string{"spec.formats[0].child.chunkSize", "child.chunkSize must be smaller than parent.chunkSize"}},
		{"sections with sentence windows", ChunkingPolicySpec{Strategy: StrategySentenceWindow,
			Formats: []FormatRule{{Match: code, Parent: &ChunkSize{ChunkSize: 1500, Boundaries: BoundariesSections}}}},
			[]string{"spec.formats[0].parent.boundaries", "parent.boundaries Sections needs strategy ParentChild"}},
		{"boundaries under a rule's child", ChunkingPolicySpec{Formats: []FormatRule{{Match: code, Child: &ChunkSize{ChunkSize: 100, MinChunkSize: 10}}}},
			[]string{"spec.formats[0].child", "boundaries and minChunkSize apply to parents only"}},
		{"unknown format", ChunkingPolicySpec{Formats: []FormatRule{{Match: FormatMatch{Format: "Slides"}}}},
			[]string{"spec.formats[0].match.format", `Unsupported value: "Slides"`}},
		{"unknown language", ChunkingPolicySpec{Formats: []FormatRule{{Match: FormatMatch{Languages: []Language{"klingon"}}}}},
			[]string{"spec.formats[0].match.languages[0]", `Unsupported value: "klingon"`}},
		{"regex without a list", ChunkingPolicySpec{Formats: []FormatRule{{Match: code, Separators: &Separators{Regex: true}}}},
			[]string{"spec.formats[0].separators.custom", "separators.regex needs a custom separator list"}},
		{"unknown preset", ChunkingPolicySpec{Formats: []FormatRule{{Match: code, Separators: &Separators{Preset: "Go"}}}},
			[]string{"spec.formats[0].separators.preset", `Unsupported value: "Go"`}},
		{"overlap not smaller than size", ChunkingPolicySpec{Formats: []FormatRule{{Match: code, Child: &ChunkSize{ChunkSize: 100, ChunkOverlap: 100}}}},
			[]string{"spec.formats[0].child.chunkOverlap", "chunkOverlap must be smaller than chunkSize"}},
	}
}

func TestValidateRefusesFormats(t *testing.T) {
	for _, tt := range invalidFormatSpecs() {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if err == nil {
				t.Fatal("Validate() = nil")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestRuleForPrefersTheLanguage(t *testing.T) {
	s := ChunkingPolicySpec{Formats: []FormatRule{
		{Match: FormatMatch{Format: FormatCode}, Parent: &ChunkSize{ChunkSize: 1000}},
		{Match: FormatMatch{Languages: []Language{"go"}}, Parent: &ChunkSize{ChunkSize: 2000}},
	}}
	if r := s.RuleFor(FormatCode, "go"); r == nil || r.Parent.ChunkSize != 2000 {
		t.Errorf("go: rule %+v, want the languages rule", r)
	}
	if r := s.RuleFor(FormatCode, "python"); r == nil || r.Parent.ChunkSize != 1000 {
		t.Errorf("python: rule %+v, want the Code rule", r)
	}
	if r := s.RuleFor(FormatMarkdown, "markdown"); r != nil {
		t.Errorf("markdown: rule %+v, want none", r)
	}
}

func TestForDocumentGivesCodeItsLanguage(t *testing.T) {
	s := ChunkingPolicySpec{
		Separators: &Separators{Preset: SeparatorsMarkdown},
		Parent:     &ChunkSize{ChunkSize: 1200, Boundaries: BoundariesSections},
		Formats: []FormatRule{{Match: FormatMatch{Languages: []Language{"python"}}, LengthUnit: LengthTokens,
			Parent: &ChunkSize{ChunkSize: 400}, Child: &ChunkSize{ChunkSize: 80}}},
	}
	if got := s.ForDocument(FormatMarkdown, "markdown"); got.Separators.Preset != SeparatorsMarkdown || got.Parent.ChunkSize != 1200 || got.Formats != nil {
		t.Errorf("Markdown keeps the policy's settings, got %+v", got)
	}
	if got := s.ForDocument(FormatCode, "go"); got.Separators.Preset != SeparatorsLanguage || got.Parent.ChunkSize != 1200 {
		t.Errorf("Go gets its language's separators and the policy's sizes, got %+v", got)
	}
	got := s.ForDocument(FormatCode, "python")
	if got.LengthUnit != LengthTokens || got.Parent.ChunkSize != 400 || got.Child.ChunkSize != 80 || got.Separators.Preset != SeparatorsLanguage {
		t.Errorf("Python takes its rule, got %+v", got)
	}
}

func TestRevisionWithFormats(t *testing.T) {
	base := func() ChunkingPolicySpec {
		return ChunkingPolicySpec{Formats: []FormatRule{
			{Match: FormatMatch{Format: FormatCode}, Parent: &ChunkSize{ChunkSize: 2000}},
			{Match: FormatMatch{Languages: []Language{"python", "go"}}, Child: &ChunkSize{ChunkSize: 100}},
		}}
	}
	ref := base()
	changes := map[string]func(*ChunkingPolicySpec){
		"rule parent size": func(s *ChunkingPolicySpec) { s.Formats[0].Parent.ChunkSize = 2001 },
		"rule languages":   func(s *ChunkingPolicySpec) { s.Formats[1].Match.Languages = []Language{"python"} },
		"rule separators":  func(s *ChunkingPolicySpec) { s.Formats[0].Separators = &Separators{Preset: SeparatorsDefault} },
		"rule unit": func(s *ChunkingPolicySpec) {
			s.Formats[0].LengthUnit, s.Formats[0].Child = LengthTokens, &ChunkSize{ChunkSize: 100}
		},
		"inherited setting": func(s *ChunkingPolicySpec) { s.Child = &ChunkSize{ChunkSize: 250} },
		"a rule less":       func(s *ChunkingPolicySpec) { s.Formats = s.Formats[:1] },
		"no rules":          func(s *ChunkingPolicySpec) { s.Formats = nil },
	}
	seen := map[string]string{ref.Revision(): "base"}
	for name, change := range changes {
		s := base()
		change(&s)
		if prev, dup := seen[s.Revision()]; dup {
			t.Errorf("%s: revision equals that of %s", name, prev)
		}
		seen[s.Revision()] = name
	}
	same := map[string]func(*ChunkingPolicySpec){
		"rules in another order":     func(s *ChunkingPolicySpec) { s.Formats[0], s.Formats[1] = s.Formats[1], s.Formats[0] },
		"languages in another order": func(s *ChunkingPolicySpec) { s.Formats[1].Match.Languages = []Language{"go", "python"} },
		"inherited value spelt out":  func(s *ChunkingPolicySpec) { s.Formats[1].Parent = &ChunkSize{ChunkSize: 1500} },
	}
	for name, change := range same {
		s := base()
		change(&s)
		if s.Revision() != ref.Revision() {
			t.Errorf("%s changed the revision", name)
		}
	}
	if n := ref.Normalized(); !reflect.DeepEqual(n.Normalized(), n) {
		t.Error("Normalized is not idempotent with formats")
	}
}
