package policy

import (
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// FuzzParse feeds arbitrary documents to the policy loader: it never
// panics; a policy it accepts compiles (Parse validates what Compile
// needs) and its builder splits a document into children that each name a
// parent of the result.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"---\n# only a comment\n",
		"apiVersion: parentrag.io/v1alpha1\nkind: ChunkingPolicy\nmetadata: {name: p}\nspec:\n  parent: {chunkSize: 1500}\n  child: {chunkSize: 300, chunkOverlap: 30}\n",
		"spec:\n  lengthUnit: Tokens\n  tokenizer: o200k_base\n  parent: {chunkSize: 40}\n  child: {chunkSize: 8, chunkOverlap: 2}\n",
		"spec:\n  separators: {preset: Markdown}\n  parent: {chunkSize: 50}\n  child: {chunkSize: 10}\n",
		"spec:\n  separators: {custom: [\"\\n## \", \"(?<=\\\\.) \", \"\"], isRegex: true}\n",
		"spec:\n  strategy: SentenceWindow\n  window: 2\n  child: {chunkSize: 20}\n",
		`{"spec": {"parent": {"chunkSize": 0}}}`,
		"a: [\n",
	} {
		f.Add([]byte(s))
	}
	doc := hierarchy.Document{ID: "d", Text: "# T\n\nOne sentence here. Another one follows! 😀 万 0A\n\n## H\n\nMore text, more words."}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		c, err := Compile(&p.Spec)
		if err != nil {
			t.Fatalf("Parse accepted %q, Compile refused it: %v", data, err)
		}
		res := c.Builder.Build(doc)
		parents := map[string]bool{}
		for _, pa := range res.Parents {
			parents[pa.ID] = true
		}
		for _, ch := range res.Children {
			if !parents[ch.ParentID] {
				t.Fatalf("child %s names parent %s, not in the result", ch.ID, ch.ParentID)
			}
		}
	})
}
