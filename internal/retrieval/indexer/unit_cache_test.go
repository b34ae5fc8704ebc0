package indexer_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// unitFiles returns the packs in the cache dir.
func unitFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := indexer.UnitPacks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestBuildSkipsUnitsItCannotStore checks that a unit cache it cannot
// write to fails no build: every unit is counted as not stored, the index
// is the one a build without the cache makes, and the next build, once
// the cache is writable, keeps them all in one pack, which the build
// after reuses.
func TestBuildSkipsUnitsItCannotStore(t *testing.T) {
	docs := testDocs(20)
	dir := filepath.Join(t.TempDir(), "units")
	cache, err := indexer.OpenUnitCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A file where the cache's directory was makes every write fail, even as root.
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := indexer.Options{Units: cache, UnitScope: []byte("test")}
	ix := build(t, docs, opts)
	if ix.UnitsNotStored != len(docs) || ix.UnitStoreErr == nil {
		t.Fatalf("%d units not stored (%v), want %d and an error", ix.UnitsNotStored, ix.UnitStoreErr, len(docs))
	}
	if !reflect.DeepEqual(searchAll(t, ix), searchAll(t, build(t, docs, indexer.Options{}))) {
		t.Error("a build whose units were not stored differs from one without a cache")
	}
	os.Remove(dir)
	if cache, err = indexer.OpenUnitCache(dir); err != nil {
		t.Fatal(err)
	}
	opts.Units = cache
	if ix := build(t, docs, opts); ix.UnitsNotStored != 0 || ix.Reused != 0 {
		t.Errorf("the next build stored all but %d units and reused %d, want all and none", ix.UnitsNotStored, ix.Reused)
	}
	if n := len(unitFiles(t, dir)); n != 1 {
		t.Errorf("%d packs, want 1", n)
	}
	if ix := build(t, docs, opts); ix.Reused != len(docs) {
		t.Errorf("the build after reused %d of %d units", ix.Reused, len(docs))
	}
}

// TestUnitCachePrunesUnusedPacks checks that Prune removes the pack of a
// scope no build has used since the cut-off, keeps the others and any
// file it does not know, and removes the files of the cache's earlier
// layout, a file per unit in directories named by a byte, whatever their
// age.
func TestUnitCachePrunesUnusedPacks(t *testing.T) {
	docs := testDocs(2)
	dir := t.TempDir()
	cache, err := indexer.OpenUnitCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	build(t, docs, indexer.Options{Units: cache, UnitScope: []byte("old policy")})
	old := unitFiles(t, dir)
	build(t, docs, indexer.Options{Units: cache, UnitScope: []byte("new policy")})
	if len(old) != 1 || len(unitFiles(t, dir)) != 2 {
		t.Fatalf("packs %v after one scope's build, %d after two, want 1 and 2", old, len(unitFiles(t, dir)))
	}
	twoDays := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(old[0], twoDays, twoDays); err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(dir, "ab")
	for _, name := range []string{"", "ab01.unit", ".tmp-123"} {
		path := filepath.Join(legacy, name)
		if name == "" {
			err = os.Mkdir(path, 0o755)
		} else {
			err = os.WriteFile(path, []byte("x"), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := cache.Prune(time.Now().Add(-24 * time.Hour)); err != nil || n != 3 {
		t.Errorf("pruning removed %d files (%v), want the old scope's pack and two legacy files", n, err)
	}
	if left := unitFiles(t, dir); len(left) != 1 || left[0] == old[0] {
		t.Errorf("packs left %v, want the new scope's", left)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("the legacy directory is still there (%v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("pruning removed a file it does not know: %v", err)
	}
	if ix := build(t, docs, indexer.Options{Units: cache, UnitScope: []byte("old policy")}); ix.Reused != 0 {
		t.Errorf("a build of the pruned scope reused %d units", ix.Reused)
	}
}
