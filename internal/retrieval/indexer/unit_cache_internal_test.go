package indexer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// errDiskFull stands for the disk of a unit cache filling up.
var errDiskFull = errors.New("no space left on device")

// fullDisk is a file that takes limit bytes, then fails every write.
type fullDisk struct {
	f     io.Writer
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.limit {
		n, _ := d.f.Write(p[:d.limit])
		d.limit = 0
		return n, errDiskFull
	}
	d.limit -= len(p)
	return d.f.Write(p)
}

// TestBuildLeavesOutAUnitCacheThatFills checks that a unit cache whose
// disk fills while the first pass spills into it fails no build: the
// build runs its first pass again without the cache, indexes what a build
// without cache indexes, counts every unit as not stored with the disk's
// error, and leaves no pack and no temporary file in the cache nor
// anything in its spill directory.
func TestBuildLeavesOutAUnitCacheThatFills(t *testing.T) {
	docs := synthtest.New(8, 3000).Documents(30)
	parent, _ := split.NewRecursive(split.DefaultOptions(400, 0))
	child, _ := split.NewRecursive(split.DefaultOptions(80, 10))
	b := &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "r", Parent: parent, Child: child}
	cacheDir, spillDir := t.TempDir(), t.TempDir()
	cache, err := OpenUnitCache(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer func(sink func(*os.File) io.Writer) { spillSink = sink }(spillSink)
	spillSink = func(f *os.File) io.Writer {
		if filepath.Dir(f.Name()) == cacheDir {
			return &fullDisk{f: f, limit: 100}
		}
		return f
	}
	build := func(opts Options) *Index {
		lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
		if err != nil {
			t.Fatal(err)
		}
		opts.ContextWeight, opts.SpillDir, opts.BatchSize = 0.8, spillDir, 16
		ix, err := Build(context.Background(), docs, b, lex, opts)
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		return ix
	}
	full := build(Options{Units: cache, UnitScope: []byte("scope")})
	if full.UnitsNotStored != len(docs) || !errors.Is(full.UnitStoreErr, errDiskFull) || full.Reused != 0 {
		t.Errorf("%d units not stored (%v), %d reused; want %d, the disk's error and none", full.UnitsNotStored, full.UnitStoreErr, full.Reused, len(docs))
	}
	plain := build(Options{})
	if statsOf(full) != statsOf(plain) || full.ChildCount != plain.ChildCount {
		t.Errorf("store %+v (%d children), without cache %+v (%d)", statsOf(full), full.ChildCount, statsOf(plain), plain.ChildCount)
	}
	for _, dir := range []string{cacheDir, spillDir} {
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s holds %d files after the build, want none", dir, len(entries))
		}
	}
}

// statsOf returns the statistics of the embedded store ix filled.
func statsOf(ix *Index) embedded.Stats {
	return ix.Store.(*embedded.Store).Stats()
}

// TestUnitCacheShedsTheTermsOfDocumentsGone checks that a build whose
// term table, taken from the previous pack, holds far more terms than its
// documents use keeps no pack, so that the next build starts the table
// afresh (reusing nothing) and the one after reuses every unit again.
func TestUnitCacheShedsTheTermsOfDocumentsGone(t *testing.T) {
	words := func(prefix string, n int) hierarchy.Document {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s%dq ", prefix, i)
			if i%12 == 11 {
				b.WriteString(".\n\n")
			}
		}
		return hierarchy.Document{ID: prefix, Text: b.String()}
	}
	wide := []hierarchy.Document{words("wide", staleTermsSlack+1000)}
	narrow := []hierarchy.Document{words("narrow", 200)}
	cache, err := OpenUnitCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	parent, _ := split.NewRecursive(split.DefaultOptions(2000, 0))
	child, _ := split.NewRecursive(split.DefaultOptions(200, 0))
	b := &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "r", Parent: parent, Child: child}
	build := func(docs []hierarchy.Document) int {
		lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := Build(context.Background(), docs, b, lex, Options{Units: cache, UnitScope: []byte("scope"), ContextWeight: 0.8})
		if err != nil {
			t.Fatal(err)
		}
		return ix.Reused
	}
	packTerms := func() int {
		p, err := openPack(filepath.Join(cache.Dir(), mustOnePack(t, cache.Dir())))
		if err != nil {
			t.Fatal(err)
		}
		defer p.close()
		return len(p.terms)
	}
	build(wide)
	if n := packTerms(); n < staleTermsSlack {
		t.Fatalf("the wide document's pack holds %d terms", n)
	}
	build(narrow) // its table: the wide terms and its own
	if packs, _ := UnitPacks(cache.Dir()); len(packs) != 0 {
		t.Fatalf("a build using 200 of %d terms kept its pack", staleTermsSlack+1200)
	}
	if reused := build(narrow); reused != 0 {
		t.Errorf("the build after reused %d units from a pack it should not have", reused)
	}
	if n := packTerms(); n > 400 {
		t.Errorf("the fresh pack holds %d terms, want the narrow document's", n)
	}
	if reused := build(narrow); reused != 1 {
		t.Errorf("the next build reused %d of 1 units", reused)
	}
}

// mustOnePack returns the name of the only pack in dir.
func mustOnePack(t *testing.T, dir string) string {
	t.Helper()
	packs, err := UnitPacks(dir)
	if err != nil || len(packs) != 1 {
		t.Fatalf("packs %v (%v), want one", packs, err)
	}
	return filepath.Base(packs[0])
}

// FuzzDecodePackFooter checks that no footer, however damaged, panics the
// decoder, and that whatever it accepts lies within the pack's units.
func FuzzDecodePackFooter(f *testing.F) {
	refs := []spillRef{
		{off: int64(len(packMagic)), n: 40, sum: 7, key: unitKey{1}, parents: 2, children: 5},
		{off: int64(len(packMagic)) + 40, n: 10, key: unitKey{2}, parents: 1, children: 1},
	}
	const end = int64(len(packMagic)) + 50
	whole := encodePackFooter([]string{"bee", "hive", "honey"}, refs, end)
	footer := whole[:len(whole)-packTrailerSize]
	f.Add(footer)
	long := &unitWriter{}
	long.strs([]string{"bee"})
	long.uint(1)
	long.str(strings.Repeat("k", 40)) // a key of 40 bytes
	f.Add(long.b)
	f.Fuzz(func(t *testing.T, footer []byte) {
		p := &unitPack{}
		if err := p.decodeFooter(footer, end); err != nil {
			return
		}
		for key, u := range p.units {
			if u.off < int64(len(packMagic)) || u.off+int64(u.n) > end {
				t.Fatalf("unit %x lies at %d+%d, outside the units ending at %d", key[:4], u.off, u.n, end)
			}
		}
	})
}

// TestPackFooterRoundTrips checks that a footer decodes to the terms and
// units it was encoded from.
func TestPackFooterRoundTrips(t *testing.T) {
	refs := []spillRef{
		{off: 8, n: 40, sum: 7, key: unitKey{1}, parents: 2, children: 5},
		{off: 30, n: 3, sum: 9, key: unitKey{2}},
	}
	whole := encodePackFooter([]string{"bee", "hive"}, refs, 48)
	p := &unitPack{}
	if err := p.decodeFooter(whole[:len(whole)-packTrailerSize], 48); err != nil {
		t.Fatal(err)
	}
	want := packedUnit{off: 8, n: 40, sum: 7, parents: 2, children: 5}
	if len(p.terms) != 2 || p.terms[1] != "hive" || len(p.units) != 2 || p.units[unitKey{1}] != want || p.units[unitKey{2}] != (packedUnit{off: 30, n: 3, sum: 9}) {
		t.Errorf("decoded terms %q and units %+v", p.terms, p.units)
	}
}
