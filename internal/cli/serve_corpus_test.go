package cli

import "testing"

// The vector store id is --corpus, else the Corpus name in the revision
// ConfigMap's name, else the index directory's name.
func TestServeCorpusName(t *testing.T) {
	for _, c := range []struct {
		f    serveFlags
		want string
	}{
		{serveFlags{corpus: "handbook", configMap: "other-bd6a98db"}, "handbook"},
		{serveFlags{configMap: "support-handbook-bd6a98db"}, "support-handbook"},
		{serveFlags{configMap: "plain"}, "plain"},
		{serveFlags{index: "/tmp/notes-index/"}, "notes-index"},
	} {
		if got := c.f.corpusName(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}
