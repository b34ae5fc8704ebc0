package indexer_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// unitFiles returns the unit files in the cache dir.
func unitFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := indexer.UnitFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestBuildSkipsUnitsItCannotStore checks that a unit cache whose files
// cannot be written fails no build: every unit is counted as not stored,
// the index is the one a build without the cache makes, and the next
// build, once the cache is writable, stores them all.
func TestBuildSkipsUnitsItCannotStore(t *testing.T) {
	docs := testDocs(20)
	dir := t.TempDir()
	cache, err := indexer.OpenUnitCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A file where each subdirectory was makes every write fail, even as root.
	subdirs, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, d := range subdirs {
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(d, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := indexer.Options{Units: cache, UnitScope: []byte("test")}
	ix := build(t, docs, opts)
	if ix.UnitsNotStored != len(docs) || ix.UnitStoreErr == nil {
		t.Fatalf("%d units not stored (%v), want %d and an error", ix.UnitsNotStored, ix.UnitStoreErr, len(docs))
	}
	if !reflect.DeepEqual(searchAll(t, ix), searchAll(t, build(t, docs, indexer.Options{}))) {
		t.Error("a build whose units were not stored differs from one without a cache")
	}
	for _, d := range subdirs {
		os.Remove(d)
	}
	if cache, err = indexer.OpenUnitCache(dir); err != nil {
		t.Fatal(err)
	}
	opts.Units = cache
	if ix := build(t, docs, opts); ix.UnitsNotStored != 0 || ix.Reused != 0 {
		t.Errorf("the next build stored all but %d units and reused %d, want all and none", ix.UnitsNotStored, ix.Reused)
	}
	if n := len(unitFiles(t, dir)); n != len(docs) {
		t.Errorf("%d unit files, want %d", n, len(docs))
	}
}

// TestUnitCacheTouchesOldUnitsOnly checks that a hit refreshes a unit's
// modification time only once it is a day old, and that Prune allows for
// that day: a unit is pruned only when a day older than the cut-off.
func TestUnitCacheTouchesOldUnitsOnly(t *testing.T) {
	docs := testDocs(2)
	dir := t.TempDir()
	cache, err := indexer.OpenUnitCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := indexer.Options{Units: cache, UnitScope: []byte("test")}
	build(t, docs, opts)
	files := unitFiles(t, dir)
	recent, old := time.Now().Add(-time.Hour), time.Now().Add(-48*time.Hour)
	for i, f := range files {
		if err := os.Chtimes(f, recent, []time.Time{recent, old}[i]); err != nil {
			t.Fatal(err)
		}
	}
	if ix := build(t, docs, opts); ix.Reused != len(docs) {
		t.Fatalf("reused %d of %d", ix.Reused, len(docs))
	}
	info0, _ := os.Stat(files[0])
	info1, _ := os.Stat(files[1])
	if !info0.ModTime().Equal(recent) {
		t.Errorf("a hit on an hour-old unit moved its time to %v", info0.ModTime())
	}
	if time.Since(info1.ModTime()) > time.Minute {
		t.Errorf("a hit on a two-day-old unit left its time at %v", info1.ModTime())
	}
	if n, err := cache.Prune(time.Now()); err != nil || n != 0 {
		t.Errorf("pruning units used within a day removed %d (%v)", n, err)
	}
	if n, err := cache.Prune(time.Now().Add(23*time.Hour + 30*time.Minute)); err != nil || n != 1 {
		t.Errorf("pruning 23.5 hours ahead removed %d (%v), want the hour-old unit", n, err)
	}
}
