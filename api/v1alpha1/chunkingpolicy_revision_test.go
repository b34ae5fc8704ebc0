package v1alpha1

import (
	"testing"

	"sigs.k8s.io/yaml"
)

// pinnedRevisions are the revisions of policies as they were written before
// per-format rules existed. A revision names every index built with the
// policy, so a policy that says nothing new must keep it: otherwise an
// upgrade would rebuild every Corpus for nothing.
var pinnedRevisions = []struct{ spec, revision string }{
	{`{}`, "4bae304f53f98d36"},
	{`{strategy: ParentChild, lengthUnit: Characters, separators: {preset: Markdown}, parent: {chunkSize: 1500, chunkOverlap: 0, boundaries: Sections, minChunkSize: 150}, child: {chunkSize: 300, chunkOverlap: 30}}`, "4159ee56f9030050"},
	{`{lengthUnit: Tokens, tokenizer: cl100k_base, parent: {chunkSize: 400, chunkOverlap: 0}, child: {chunkSize: 80, chunkOverlap: 10}}`, "811cf0ff263b7f6b"},
	{`{strategy: SentenceWindow, window: {sentences: 2}, child: {chunkSize: 400, chunkOverlap: 0}, parent: {chunkSize: 2000}}`, "52d45cbb9ad2328d"},
	{`{separators: {preset: Markdown}, parent: {chunkSize: 2000, boundaries: Sections}}`, "59b5d5b3d1982126"},
	{`{separators: {preset: Markdown}, parent: {chunkSize: 1500, boundaries: Sections, minChunkSize: 40}, child: {chunkSize: 300, chunkOverlap: 30}}`, "cca75f528566f535"},
	{`{separators: {custom: ["\n## ", "\n\n", ". ", " ", ""]}}`, "47880163b548191f"},
	{`{separators: {custom: ["\\n#+ ", "\\n\\n"], regex: true}, lengthUnit: Tokens, tokenizer: o200k_base}`, "5afe353f1b362648"},
	{`{parent: {chunkSize: 1000, minChunkSize: 100}, child: {chunkSize: 100, chunkOverlap: 10}}`, "d73be0f7a0cd048c"},
}

func TestRevisionsOfExistingPoliciesArePinned(t *testing.T) {
	for _, p := range pinnedRevisions {
		var s ChunkingPolicySpec
		if err := yaml.UnmarshalStrict([]byte(p.spec), &s); err != nil {
			t.Fatalf("%s: %v", p.spec, err)
		}
		if got := s.Revision(); got != p.revision {
			t.Errorf("%s: revision %s, want %s", p.spec, got, p.revision)
		}
	}
}
