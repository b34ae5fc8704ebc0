package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/repo"
)

// TestReadmeExampleFindsWhatItAsks runs the README's "Try it on your files"
// block as written: the policy of its heredoc, `local index` of docs/, and
// its question. The first parent must be the section that answers it
// (Context budgets), not a page that merely quotes the question.
func TestReadmeExampleFindsWhatItAsks(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	policy := regexp.MustCompile(`(?s)cat > policy.yaml <<'YAML'\n(.*?)\nYAML\n`).FindStringSubmatch(readme)
	query := regexp.MustCompile(`local query --index \S+ "([^"]+)"`).FindStringSubmatch(readme)
	if policy == nil || query == nil {
		t.Fatal("the README no longer has the policy heredoc and the local query line this test runs")
	}
	dir := t.TempDir()
	policyFile := writeFile(t, dir, "policy.yaml", policy[1])
	index := filepath.Join(dir, "notes-index")
	mustExecute(t, "local", "index", "--policy", policyFile, "--out", index, "--no-unit-cache", filepath.Join(root, "docs"))
	_, results := queryJSONResults(t, index, query[1])
	if len(results) == 0 {
		t.Fatalf("no answer to the README's question %q", query[1])
	}
	if results[0].DocID != "retrieval.md" || !strings.Contains(results[0].Text, "budget") {
		t.Errorf("the README's question %q is answered first by %s: %.200q", query[1], results[0].DocID, results[0].Text)
	}
}
