package embedded

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

func saveLoad(t *testing.T, e *Store) *Store {
	t.Helper()
	dir := t.TempDir()
	if err := e.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// randomStore builds a store with tombstones, shared parents and both
// vector kinds.
func randomStore(t *testing.T, metric index.Metric) (*Store, model) {
	r := rand.New(rand.NewPCG(3, uint64(metric)))
	e := mustStore(t, Options{Metric: metric})
	ref := model{}
	for range 10 {
		batch := make([]index.Record, 40)
		for i := range batch {
			batch[i] = randRecord(r, fmt.Sprintf("c-%d", r.IntN(300)), 5, false)
		}
		mustUpsert(t, e, batch...)
		ref.upsert(batch)
	}
	del := []string{"c-1", "c-2", "c-3", "c-50", "c-299"}
	if err := e.Delete(context.Background(), del); err != nil {
		t.Fatal(err)
	}
	for _, id := range del {
		delete(ref, id)
	}
	return e, ref
}

func TestSaveLoadRoundTrip(t *testing.T) {
	for _, metric := range []index.Metric{index.IP, index.Cosine, index.L2} {
		t.Run(metric.String(), func(t *testing.T) {
			e, ref := randomStore(t, metric)
			if e.Stats().Tombstones == 0 {
				t.Fatal("want tombstones in the saved store")
			}
			loaded := saveLoad(t, e)
			if loaded.Metric() != metric {
				t.Fatalf("metric %v, want %v", loaded.Metric(), metric)
			}
			before, after := e.Stats(), loaded.Stats()
			if after.Records != before.Records || after.Tombstones != 0 || after.DenseDims != before.DenseDims {
				t.Fatalf("stats before %+v after %+v", before, after)
			}
			r := rand.New(rand.NewPCG(9, 9))
			for q := range 100 {
				req := index.SearchRequest{Vector: vector.Vector{Sparse: randSparse(r, 45, 6, false)}, TopK: 1 + q%20}
				if q%2 == 1 {
					req.Vector = vector.Vector{Dense: randDense(r, 5, false)}
				}
				want := mustSearch(t, e, req)
				sameHits(t, fmt.Sprintf("query %d", q), mustSearch(t, loaded, req), want)
				sameHits(t, fmt.Sprintf("query %d vs model", q), want, ref.search(req, metric))
			}
			// The loaded store stays writable.
			mustUpsert(t, loaded, index.Record{ID: "c-7", Vector: vector.Vector{Sparse: sp(1000, 1)}})
			hits := mustSearch(t, loaded, index.SearchRequest{Vector: vector.Vector{Sparse: sp(1000, 2)}, TopK: 3})
			if len(hits) != 1 || hits[0].ID != "c-7" || hits[0].Score != 2 {
				t.Fatalf("hits after upsert into loaded store: %+v", hits)
			}
		})
	}
}

func TestSaveEmptyAndOverwrite(t *testing.T) {
	dir := t.TempDir()
	e := mustStore(t, Options{Metric: index.L2})
	if err := e.Save(dir); err != nil {
		t.Fatal(err)
	}
	empty, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := empty.Count(context.Background()); n != 0 || empty.Metric() != index.L2 {
		t.Fatalf("empty store loaded as count %d metric %v", n, empty.Metric())
	}
	mustUpsert(t, e, rec("a", vector.Vector{Sparse: sp(1, 1)}))
	if err := e.Save(dir); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := loaded.Count(context.Background()); n != 1 {
		t.Fatalf("overwritten save loads %d records", n)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != File {
		t.Fatalf("directory holds %v, want only %s", entries, File)
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestLoadDetectsCorruption(t *testing.T) {
	e, _ := randomStore(t, index.Cosine)
	dir := t.TempDir()
	if err := e.Save(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, File)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(orig)
	mutations := []struct {
		name   string
		mutate func([]byte) []byte
	}{
		{"flip magic", flipAt(0)},
		{"flip version", flipAt(8)},
		{"flip header count", flipAt(40)},
		{"flip header crc", flipAt(97)},
		{"flip first body byte", flipAt(headerSize)},
		{"flip middle", flipAt(n / 2)},
		{"flip last body byte", flipAt(n - trailerSize - 1)},
		{"flip trailer crc", flipAt(n - trailerSize)},
		{"flip trailer magic", flipAt(n - 1)},
		{"truncate to zero", func(b []byte) []byte { return b[:0] }},
		{"truncate inside header", func(b []byte) []byte { return b[:50] }},
		{"truncate after header", func(b []byte) []byte { return b[:headerSize+trailerSize] }},
		{"truncate half", func(b []byte) []byte { return b[:n/2] }},
		{"truncate one byte", func(b []byte) []byte { return b[:n-1] }},
		{"extend", func(b []byte) []byte { return append(b, 0) }},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			bad := m.mutate(append([]byte(nil), orig...))
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := Load(dir)
			if !errors.Is(err, ErrCorruptFile) {
				t.Fatalf("load = %v, %v; want ErrCorruptFile", got, err)
			}
		})
	}
}

func flipAt(i int) func([]byte) []byte {
	return func(b []byte) []byte {
		b[i] ^= 0x5a
		return b
	}
}

// TestPortableCodec runs the round trip through the word-by-word codec that
// big-endian hosts use, and checks both codecs read each other's files.
func TestPortableCodec(t *testing.T) {
	e, _ := randomStore(t, index.L2)
	native := t.TempDir()
	if err := e.Save(native); err != nil {
		t.Fatal(err)
	}
	defer func(v bool) { littleEndian = v }(littleEndian)
	littleEndian = false
	portable := saveLoad(t, e)
	fromNative, err := Load(native)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 4))
	for q := range 40 {
		req := index.SearchRequest{Vector: vector.Vector{Sparse: randSparse(r, 45, 6, false)}, TopK: 8}
		if q%2 == 1 {
			req.Vector = vector.Vector{Dense: randDense(r, 5, false)}
		}
		want := mustSearch(t, e, req)
		sameHits(t, "portable", mustSearch(t, portable, req), want)
		sameHits(t, "native file, portable reader", mustSearch(t, fromNative, req), want)
	}
}
