package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

const header = "apiVersion: parentrag.io/v1alpha1\nkind: ChunkingPolicy\nmetadata:\n  name: p\n"

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		data string
		want v1alpha1.ChunkingPolicySpec
	}{
		{"full YAML", header + `spec:
  strategy: ParentChild
  lengthUnit: Tokens
  tokenizer: o200k_base
  separators: {preset: Markdown}
  parent: {chunkSize: 800, chunkOverlap: 20}
  child: {chunkSize: 100, chunkOverlap: 10}
`, v1alpha1.ChunkingPolicySpec{
			Strategy: v1alpha1.StrategyParentChild, LengthUnit: v1alpha1.LengthTokens, Tokenizer: v1alpha1.TokenizerO200K,
			Separators: &v1alpha1.Separators{Preset: v1alpha1.SeparatorsMarkdown},
			Parent:     &v1alpha1.ChunkSize{ChunkSize: 800, ChunkOverlap: 20},
			Child:      &v1alpha1.ChunkSize{ChunkSize: 100, ChunkOverlap: 10},
		}},
		{"JSON", `{"apiVersion":"parentrag.io/v1alpha1","kind":"ChunkingPolicy","spec":{"child":{"chunkSize":50}}}`,
			v1alpha1.ChunkingPolicySpec{Child: &v1alpha1.ChunkSize{ChunkSize: 50}}},
		{"spec only", "spec:\n  parent: {chunkSize: 600}\n",
			v1alpha1.ChunkingPolicySpec{Parent: &v1alpha1.ChunkSize{ChunkSize: 600}}},
		{"empty spec", header + "spec: {}\n", v1alpha1.ChunkingPolicySpec{}},
		{"leading document marker and comments", "# a policy\n---\n" + header + "spec: {}\n", v1alpha1.ChunkingPolicySpec{}},
		{"window without sentences is the schema default", header + "spec:\n  strategy: SentenceWindow\n  window: {}\n",
			v1alpha1.ChunkingPolicySpec{Strategy: v1alpha1.StrategySentenceWindow, Window: &v1alpha1.Window{Sentences: 2}}},
		{"explicit window 0", header + "spec:\n  strategy: SentenceWindow\n  window: {sentences: 0}\n",
			v1alpha1.ChunkingPolicySpec{Strategy: v1alpha1.StrategySentenceWindow, Window: &v1alpha1.Window{Sentences: 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.data))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(p.Spec, tt.want) {
				t.Errorf("spec = %+v, want %+v", p.Spec, tt.want)
			}
		})
	}
}

func TestParseKeepsMetadata(t *testing.T) {
	p, err := Parse([]byte(header + "spec: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "p" || p.Kind != "ChunkingPolicy" || p.APIVersion != "parentrag.io/v1alpha1" {
		t.Errorf("got name %q kind %q apiVersion %q", p.Name, p.Kind, p.APIVersion)
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"misspelt chunkSize", header + "spec:\n  child: {chunksize: 100}\n", []string{"decoding", "unknown field", "chunksize"}},
		{"misspelt chunkSize (typo)", header + "spec:\n  child: {chunkSzie: 100}\n", []string{"unknown field", "chunkSzie"}},
		{"field name in wrong case", header + "spec:\n  Strategy: SentenceWindow\n", []string{"unknown field", "Strategy"}},
		{"unknown spec field", header + "spec:\n  overlap: 3\n", []string{"unknown field", "overlap"}},
		{"unknown top-level field", header + "specs: {}\n", []string{"unknown field", "specs"}},
		{"duplicate key", header + "spec:\n  strategy: ParentChild\n  strategy: SentenceWindow\n", []string{"decoding"}},
		{"wrong kind", "apiVersion: parentrag.io/v1alpha1\nkind: Corpus\nspec: {}\n", []string{`kind is "Corpus"`, "want ChunkingPolicy"}},
		{"wrong apiVersion", "apiVersion: parentrag.io/v1beta1\nkind: ChunkingPolicy\nspec: {}\n", []string{`apiVersion is "parentrag.io/v1beta1"`, "parentrag.io/v1alpha1"}},
		{"other group", "apiVersion: v1\nkind: ChunkingPolicy\nspec: {}\n", []string{`apiVersion is "v1"`}},
		{"empty", "", []string{"empty document"}},
		{"white space", " \n\t\n", []string{"empty document"}},
		{"only comments", "# nothing here\n# at all\n", []string{"empty document"}},
		{"only a document marker", "---\n", []string{"empty document"}},
		{"null", "null\n", []string{"empty document"}},
		{"two documents", header + "spec: {}\n---\n" + header + "spec: {}\n", []string{"2 YAML documents"}},
		{"not YAML", "spec: [unclosed\n", []string{"decoding"}},
		{"not an object", "- a\n- b\n", []string{"decoding"}},
		{"wrong type", header + "spec:\n  child: {chunkSize: ten}\n", []string{"decoding"}},
		{"invalid spec", header + "spec:\n  child: {chunkSize: 0}\n", []string{"invalid", "spec.child.chunkSize", "must be at least 1"}},
		{"window out of range", header + "spec:\n  window: {sentences: 11}\n", []string{"invalid", "spec.window.sentences"}},
		{"unknown enum", header + "spec:\n  lengthUnit: Words\n", []string{"invalid", "spec.lengthUnit", `"Words"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.data))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error containing %q", p, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte(header+"spec:\n  child: {chunkSize: 120}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(header+"spec:\n  child: {chunkSize: 0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(good)
	if err != nil {
		t.Fatalf("Load(good): %v", err)
	}
	if p.Spec.GetChild().ChunkSize != 120 {
		t.Errorf("child size %d, want 120", p.Spec.GetChild().ChunkSize)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "spec.child.chunkSize") {
		t.Errorf("Load(bad) = %v, want an error naming the file and the field", err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	if _, err := Load(missing); err == nil || !strings.Contains(err.Error(), "reading policy") || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing) = %v, want a read error naming the file", err)
	}
}

func TestSamples(t *testing.T) {
	dir := filepath.Join("..", "..", "config", "samples")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var samples, all []string
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			all = append(all, filepath.Base(f))
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "\nkind: ChunkingPolicy\n") {
			samples = append(samples, filepath.Base(f))
		}
	}
	if len(samples) == 0 {
		t.Fatalf("no samples in %s", dir)
	}
	for _, name := range samples {
		t.Run(name, func(t *testing.T) {
			p, err := Load(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if p.Name == "" || p.Kind != "ChunkingPolicy" || p.APIVersion != v1alpha1.GroupVersion.String() {
				t.Errorf("sample lacks name, kind or apiVersion: %q %q %q", p.Name, p.Kind, p.APIVersion)
			}
			c, err := Compile(&p.Spec)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			res := c.Builder.Build(docOf("# Sample\n\nOne sentence here. Another one there.\n\n## Part\n\nMore text follows."))
			if len(res.Parents) == 0 || len(res.Children) == 0 {
				t.Errorf("sample policy split nothing: %d parents, %d children", len(res.Parents), len(res.Children))
			}
		})
	}
	// The kustomization lists exactly the sample files.
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	sort.Strings(k.Resources)
	sort.Strings(all)
	if !reflect.DeepEqual(k.Resources, all) {
		t.Errorf("kustomization resources %v, sample files %v", k.Resources, all)
	}
}

func TestDefault(t *testing.T) {
	p := Default()
	if p.Kind != "ChunkingPolicy" || p.APIVersion != v1alpha1.GroupVersion.String() || p.Name == "" {
		t.Errorf("Default() header %q %q %q", p.Kind, p.APIVersion, p.Name)
	}
	if err := p.Spec.Validate(); err != nil {
		t.Fatalf("Default() is invalid: %v", err)
	}
	n := p.Spec.Normalized()
	if n.Strategy != v1alpha1.StrategyParentChild || n.LengthUnit != v1alpha1.LengthCharacters ||
		*n.Parent != (v1alpha1.ChunkSize{ChunkSize: 1500}) || *n.Child != (v1alpha1.ChunkSize{ChunkSize: 300, ChunkOverlap: 30}) {
		t.Errorf("Default() normalises to %+v, want ParentChild 1500/0 and 300/30 characters", n)
	}
	// Written out and read back, it is the same policy.
	data, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(Default()): %v", err)
	}
	if back.Spec.Revision() != p.Spec.Revision() {
		t.Error("Default() changed revision through YAML")
	}
}
