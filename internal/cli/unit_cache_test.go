package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalIndexReusesUnits checks that a second `local index` of a folder
// with one edited file reuses the units of the others from --unit-cache
// and writes the bundle a run without cache writes, and that
// --no-unit-cache reads and writes no cache.
func TestLocalIndexReusesUnits(t *testing.T) {
	dir := t.TempDir()
	root := testCorpus(t, dir)
	cache := filepath.Join(dir, "units")
	_, stderr := mustExecute(t, "local", "index", "--quiet", "--unit-cache", cache, "--out", filepath.Join(dir, "a"), root)
	if !strings.Contains(stderr, "reused 0 of 3 documents from the unit cache "+cache) {
		t.Errorf("first run: %q", stderr)
	}
	if packs, _ := filepath.Glob(filepath.Join(cache, "*.pack")); len(packs) != 1 { // one pack per scope
		t.Errorf("the cache holds %d packs, want 1", len(packs))
	}
	names := listDir(t, root)
	writeFile(t, root, names[0], "# Edited\n\nA new text about lighthouses.\n")
	_, stderr = mustExecute(t, "local", "index", "--quiet", "--unit-cache", cache, "--out", filepath.Join(dir, "b"), root)
	if !strings.Contains(stderr, "reused 2 of 3 documents") {
		t.Errorf("after one edit: %q", stderr)
	}
	_, stderr = mustExecute(t, "local", "index", "--quiet", "--no-unit-cache", "--out", filepath.Join(dir, "c"), root)
	if strings.Contains(stderr, "unit cache") {
		t.Errorf("--no-unit-cache: %q", stderr)
	}
	for _, name := range []string{"parents.jsonl", "children/vectors.prgv", "lexical.stats"} {
		b, errB := os.ReadFile(filepath.Join(dir, "b", name))
		c, errC := os.ReadFile(filepath.Join(dir, "c", name))
		if errB != nil || errC != nil || string(b) != string(c) {
			t.Errorf("%s differs between the cached and the uncached run (%v, %v)", name, errB, errC)
		}
	}
	if _, _, err := execute(t, "local", "index", "--unit-cache", cache, "--no-unit-cache", "--out", filepath.Join(dir, "d"), root); err == nil {
		t.Error("--unit-cache with --no-unit-cache was accepted")
	}
}

// TestLocalIndexReusesSegments checks that `local index --child-index
// segments` says how many runs of documents it took from the cache: none
// the first time, the one run of the three documents once they are
// unchanged, and none after an edit of one of them.
func TestLocalIndexReusesSegments(t *testing.T) {
	dir := t.TempDir()
	root := testCorpus(t, dir)
	cache := filepath.Join(dir, "units")
	index := func(out string) string {
		_, stderr := mustExecute(t, "local", "index", "--quiet", "--child-index", "segments", "--unit-cache", cache, "--out", filepath.Join(dir, out), root)
		return stderr
	}
	if stderr := index("a"); !strings.Contains(stderr, "reused 0 of 3 documents (in 0 of 1 runs) from the unit cache "+cache) {
		t.Errorf("first run: %q", stderr)
	}
	if stderr := index("b"); !strings.Contains(stderr, "reused 3 of 3 documents (in 1 of 1 runs)") {
		t.Errorf("unchanged: %q", stderr)
	}
	writeFile(t, root, listDir(t, root)[0], "# Edited\n\nA new text about lighthouses.\n")
	if stderr := index("c"); !strings.Contains(stderr, "reused 0 of 3 documents (in 0 of 1 runs)") {
		t.Errorf("after one edit: %q", stderr)
	}
}
