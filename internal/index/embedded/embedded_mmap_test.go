package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// mixedQueries returns n queries alternating sparse and 5-dim dense parts,
// as randomStore's records carry.
func mixedQueries(seed uint64, n int) []index.SearchRequest {
	r := rand.New(rand.NewPCG(seed, seed))
	out := make([]index.SearchRequest, n)
	for i := range out {
		out[i] = index.SearchRequest{Vector: vector.Vector{Sparse: randSparse(r, 45, 6, false)}, TopK: 1 + i%12}
		if i%2 == 1 {
			out[i].Vector = vector.Vector{Dense: randDense(r, 5, false)}
		}
	}
	return out
}

// savedDir saves e and returns the directory and the file's size.
func savedDir(t *testing.T, e *Store) (string, int64) {
	t.Helper()
	dir := t.TempDir()
	if err := e.Save(dir); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	return dir, st.Size()
}

// A file Save writes is served from the mapping: every section but the
// small symbol offsets is a view, and searches answer as the original.
func TestLoadMapsFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Load maps files on Linux only; elsewhere it reads them into memory")
	}
	e, _ := randomStore(t, index.Cosine)
	dir, size := savedDir(t, e)
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	st := loaded.Stats()
	body := size - headerSize - trailerSize
	if !loaded.Mapped() || st.MappedBytes < body-4*int64(loaded.recs.syms.len()) || st.MappedBytes > body {
		t.Fatalf("mapped %v, %d of %d body bytes viewed", loaded.Mapped(), st.MappedBytes, body)
	}
	heap, err := loadFile(filepath.Join(dir, File), false)
	if err != nil {
		t.Fatal(err)
	}
	if heap.Mapped() || heap.Stats().MappedBytes != 0 || heap.Stats().MemoryBytes <= st.MemoryBytes {
		t.Fatalf("heap load: mapped %v, stats %+v; mapped load %+v", heap.Mapped(), heap.Stats(), st)
	}
	for i, req := range mixedQueries(5, 60) {
		want := mustSearch(t, e, req)
		sameHits(t, fmt.Sprintf("mapped, query %d", i), mustSearch(t, loaded, req), want)
		sameHits(t, fmt.Sprintf("heap, query %d", i), mustSearch(t, heap, req), want)
	}
}

// withoutPadSymbol rewrites a file Save padded as a build without padding
// wrote it: the padding symbol removed and both checksums resealed.
func withoutPadSymbol(t *testing.T, b []byte, h *fileHeader) []byte {
	pad := int(binary.LittleEndian.Uint32(b[headerSize+4*h.records+h.idBytes+4*(h.syms-1):])) -
		int(binary.LittleEndian.Uint32(b[headerSize+4*h.records+h.idBytes+4*(h.syms-2):]))
	if pad < 1 || pad > 3 {
		t.Fatalf("last symbol is %d bytes, not a padding symbol", pad)
	}
	h.syms--
	h.symBytes -= uint64(pad)
	endsAt := headerSize + 4*h.records + h.idBytes + 4*h.syms
	arenaEnd := endsAt + 4 + h.symBytes
	out := append([]byte{}, h.encode()...)
	out = append(out, b[headerSize:endsAt]...)
	out = append(out, b[endsAt+4:arenaEnd]...)
	out = append(out, b[arenaEnd+uint64(pad):]...)
	resealBody(out, headerSize)
	return out
}

// A version 2 file written before symbol padding, whose later sections are
// misaligned, still loads: those sections are copied, the rest viewed.
func TestLoadCopiesMisalignedSections(t *testing.T) {
	e := mustStore(t, Options{Metric: index.L2})
	r := rand.New(rand.NewPCG(8, 1))
	for i := range 200 {
		mustUpsert(t, e, randRecord(r, fmt.Sprintf("id-%d", i), 5, false))
	}
	mustUpsert(t, e, randRecord(r, "odd", 5, false)) // 3 more id bytes: padding needed
	b, h, path := savedFile(t, e)
	if err := os.WriteFile(path, withoutPadSymbol(t, b, h), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	if runtime.GOOS == "linux" && loaded.Stats().MappedBytes > int64(4*h.records+h.idBytes+4*h.syms+h.symBytes) {
		t.Fatalf("misaligned sections were viewed: %d bytes mapped", loaded.Stats().MappedBytes)
	}
	for i, req := range mixedQueries(6, 40) {
		sameHits(t, fmt.Sprintf("query %d", i), mustSearch(t, loaded, req), mustSearch(t, e, req))
	}
	resaved, _, _ := savedFile(t, loaded)
	if !bytes.Equal(resaved, b) {
		t.Fatal("resaving the unpadded file does not restore the padded one")
	}
}

// Searches racing Close either answer in full or fail with ErrClosed; none
// reads the mapping after it is gone (which would fault), and every call
// after Close fails with ErrClosed.
func TestCloseWaitsForSearches(t *testing.T) {
	e, _ := randomStore(t, index.IP)
	dir, _ := savedDir(t, e)
	queries := mixedQueries(7, 50)
	want := make([][]index.Hit, len(queries))
	for i, q := range queries {
		want[i] = mustSearch(t, e, q)
	}
	for round := range 20 {
		loaded, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		started := make(chan struct{}, 8)
		for g := range 8 {
			wg.Go(func() {
				started <- struct{}{}
				for i := g; ; i = (i + 1) % len(queries) {
					hits, err := loaded.Search(context.Background(), queries[i])
					if errors.Is(err, index.ErrClosed) {
						return
					}
					if err != nil {
						errs <- err
						return
					}
					if fmt.Sprint(hits) != fmt.Sprint(want[i]) {
						errs <- fmt.Errorf("round %d query %d: %v, want %v", round, i, hits, want[i])
						return
					}
				}
			})
		}
		for range 8 {
			<-started
		}
		if err := loaded.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if _, err := loaded.Count(context.Background()); !errors.Is(err, index.ErrClosed) {
			t.Fatalf("count after close: %v", err)
		}
		if err := loaded.Upsert(context.Background(), []index.Record{rec("x", vector.Vector{Sparse: sp(1, 1)})}); !errors.Is(err, index.ErrClosed) {
			t.Fatalf("upsert after close: %v", err)
		}
		if err := loaded.Save(t.TempDir()); !errors.Is(err, index.ErrClosed) {
			t.Fatalf("save after close: %v", err)
		}
		if err := loaded.Close(); err != nil {
			t.Fatalf("second close: %v", err)
		}
	}
}

// The first write to a mapped store moves it onto the heap and releases
// the mapping; the store keeps answering, the write included.
func TestWriteCopiesMappedStore(t *testing.T) {
	e, _ := randomStore(t, index.L2)
	dir, _ := savedDir(t, e)
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	if err := loaded.Delete(context.Background(), []string{"c-4"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Delete(context.Background(), []string{"c-4"}); err != nil {
		t.Fatal(err)
	}
	if loaded.Mapped() || loaded.Stats().MappedBytes != 0 {
		t.Fatalf("still mapped after a delete: %+v", loaded.Stats())
	}
	// The file may change now: the store no longer reads it.
	if err := os.WriteFile(filepath.Join(dir, File), []byte("overwritten"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, req := range mixedQueries(8, 40) {
		sameHits(t, fmt.Sprintf("query %d", i), mustSearch(t, loaded, req), mustSearch(t, e, req))
	}
}

// mapsFile reports whether the process maps path (from /proc/self/maps).
func mapsFile(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(path))
}

// The mapping lives exactly as long as the store: Close releases it, and
// so does the garbage collector for a store dropped without Close.
func TestMappingLifetime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Load maps files on Linux only")
	}
	e, _ := randomStore(t, index.IP)
	dir, _ := savedDir(t, e)
	path := filepath.Join(dir, File)
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !mapsFile(t, path) {
		t.Fatal("the loaded file is not mapped")
	}
	if err := loaded.Close(); err != nil {
		t.Fatal(err)
	}
	if mapsFile(t, path) {
		t.Fatal("the file is still mapped after Close")
	}
	func() {
		dropped, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		mustSearch(t, dropped, mixedQueries(9, 1)[0])
	}()
	for range 50 {
		runtime.GC()
		if !mapsFile(t, path) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("a store dropped without Close still maps its file after 50 collections")
}

// A file whose postings belong to no term is refused, even with valid
// checksums: its header promises postings no list holds.
func TestLoadRefusesPostingsWithoutTerms(t *testing.T) {
	e := mustStore(t, Options{})
	mustUpsert(t, e, rec("a", vector.Vector{Sparse: sp(7, 1)}), rec("b", vector.Vector{Sparse: sp(7, 2)}))
	b, h, path := savedFile(t, e)
	keys := headerSize + 16*h.records + h.idBytes + 4*h.syms + h.symBytes
	postingsEnd := keys + 8*h.terms + 8*h.postings
	h.terms, h.blocks = 0, 0
	out := append([]byte{}, h.encode()...)
	out = append(out, b[headerSize:keys]...)
	out = append(out, b[keys+8:postingsEnd]...) // postings, without their term and count
	out = append(out, b[postingsEnd+4:]...)     // what follows the one block maximum
	resealBody(out, headerSize)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Dir(path)); !errors.Is(err, ErrCorruptFile) || !strings.Contains(err.Error(), "do not add up") {
		t.Fatalf("load of postings without terms: %v", err)
	}
}
