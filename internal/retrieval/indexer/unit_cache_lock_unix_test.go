//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package indexer_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// A pack being written, however recent, is pruned once no other build has
// the cache open, and kept while one has: the build that writes it may be
// alive.
func TestPruneRemovesTheTempPacksOfBuildsGone(t *testing.T) {
	dir := t.TempDir()
	temp := filepath.Join(dir, ".pack-123")
	if err := os.WriteFile(temp, []byte("half a pack"), 0o644); err != nil {
		t.Fatal(err)
	}
	other, err := indexer.OpenUnitCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	prune := func() {
		t.Helper()
		c, err := indexer.OpenUnitCache(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Prune(time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	prune()
	if _, err := os.Stat(temp); err != nil {
		t.Fatalf("a pack being written was pruned while another build had the cache open: %v", err)
	}
	other.Close()
	prune()
	if _, err := os.Stat(temp); !os.IsNotExist(err) {
		t.Errorf("a pack being written was kept with no other build alive (%v)", err)
	}
}
