package bundle

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parentrag/parentrag/internal/filesum"
)

// TestSumFilesTakesWhatWasWrittenOnlyAtItsSize checks that sumFiles lists
// a written file's sum without reading it when the file still has the
// size it was written at, and reads the file when it does not.
func TestSumFilesTakesWhatWasWrittenOnlyAtItsSize(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ChildrenDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"parents.jsonl": "{}\n", ChildrenDir + "/vectors.prgv": "vectors", "lexical": "stats"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read, err := sumFiles(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	trusted := filesum.Sum{Size: 3, SHA256: "recorded while written"}
	written := map[string]filesum.Sum{
		"parents.jsonl":               trusted,
		ChildrenDir + "/vectors.prgv": {Size: 99, SHA256: "recorded at another size"},
	}
	got, err := sumFiles(dir, written)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(read)
	for i := range want {
		if want[i].Path == "parents.jsonl" {
			want[i].SHA256 = trusted.SHA256
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("sumFiles = %+v\nwant %+v", got, want)
	}
}
