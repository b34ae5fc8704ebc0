package embedded

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// writerCase is a stream of batches and the options to write them with.
type writerCase struct {
	name    string
	opts    Options
	batches [][]index.Record
}

// writerCases draws sparse-only, dense-only and hybrid streams, with zero
// weights, term ids small and large, records without vectors and ids of
// every length modulo 4.
func writerCases() []writerCase {
	r := rand.New(rand.NewPCG(21, 12))
	stream := func(dims int, vectors func(index.Record) vector.Vector) [][]index.Record {
		var batches [][]index.Record
		slot := 0
		for range 9 {
			batch := make([]index.Record, r.IntN(40))
			for i := range batch {
				rec := randRecord(r, fmt.Sprintf("c-%d%s", slot, strings.Repeat("x", slot%4)), dims, slot%3 == 0)
				rec.Vector = vectors(rec)
				batch[i] = rec
				slot++
			}
			batches = append(batches, batch)
		}
		return batches
	}
	sparseOnly := func(rec index.Record) vector.Vector { return vector.Vector{Sparse: rec.Vector.Sparse} }
	denseOnly := func(rec index.Record) vector.Vector { return vector.Vector{Dense: rec.Vector.Dense} }
	hybrid := func(rec index.Record) vector.Vector { return rec.Vector }
	spread := func(rec index.Record) vector.Vector { // term ids on both sides of nearTerms
		if rec.Vector.Sparse == nil {
			return vector.Vector{}
		}
		s := &vector.Sparse{Values: rec.Vector.Sparse.Values}
		for _, t := range rec.Vector.Sparse.Indices {
			s.Indices = append(s.Indices, t*(nearTerms/20)+t%3)
		}
		return vector.Vector{Sparse: s}
	}
	return []writerCase{
		{"empty", Options{}, nil},
		{"sparse", Options{}, stream(0, sparseOnly)},
		{"sparse-spread-terms", Options{}, stream(0, spread)},
		{"dense-cosine", Options{Metric: index.Cosine}, stream(6, denseOnly)},
		{"dense-l2-hnsw", Options{Metric: index.L2, HNSW: true, HNSWM: 8}, stream(3, denseOnly)},
		{"hybrid-ip", Options{HNSWThreshold: 77}, stream(5, hybrid)},
		{"sparse-parent-contexts", Options{}, parentContextStream(r)},
	}
}

// parentContextStream draws children that carry their parent's context
// vector, as the indexer gives them with a context weight: stretches of
// consecutive slots with equal weights, some longer than a block, broken
// where a child holds a context term itself, in batches that cut parents.
func parentContextStream(r *rand.Rand) [][]index.Record {
	var children []index.Record
	for p, n := range []int{1, 2, 5, 130, 3, 300, 1, 7, blockSize, 2*blockSize + 1} {
		context := randSparse(r, 60, 30, false)
		for c := range n {
			own := randSparse(r, 60, 4, c%2 == 0)
			sum := vector.AppendScaled(vector.Sparse{}, *own, *context, 0.8)
			children = append(children, index.Record{ID: fmt.Sprintf("p%d-c%d", p, c), ParentID: fmt.Sprintf("p%d", p), Vector: vector.Vector{Sparse: &sum}})
		}
	}
	var batches [][]index.Record
	for len(children) > 0 {
		n := min(len(children), 1+r.IntN(90))
		batches, children = append(batches, children[:n]), children[n:]
	}
	return batches
}

// The writer's file is byte for byte the file Save writes for a store that
// took the same batches, whether its postings stay in one buffer or spill
// into many runs; Load reads it.
func TestFileWriterMatchesSave(t *testing.T) {
	ctx := context.Background()
	for _, c := range writerCases() {
		for _, runLimit := range []int{writerRunLimit, 7} {
			t.Run(fmt.Sprintf("%s/runs-of-%d", c.name, runLimit), func(t *testing.T) {
				e := mustStore(t, c.opts)
				dir := t.TempDir()
				w, err := newFileWriter(dir, c.opts, runLimit)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, batch := range c.batches {
					mustUpsert(t, e, batch...)
					if err := w.Upsert(ctx, batch); err != nil {
						t.Fatal(err)
					}
					n += len(batch)
				}
				if got, _ := w.Count(ctx); got != n {
					t.Fatalf("count %d, want %d", got, n)
				}
				if _, ok := w.Written(); ok {
					t.Fatal("Written has a sum before Finish")
				}
				if err := w.Finish(ctx, n); err != nil {
					t.Fatal(err)
				}
				want, _ := savedDir(t, e)
				sameFiles(t, filepath.Join(dir, File), filepath.Join(want, File))
				sameSum(t, w, filepath.Join(dir, File))
				if entries, _ := os.ReadDir(dir); len(entries) != 1 {
					t.Fatalf("writer left %v in its directory", entries)
				}
				loaded, err := Load(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer loaded.Close()
				if got, _ := loaded.Count(ctx); got != n {
					t.Fatalf("loaded %d records, want %d", got, n)
				}
			})
		}
	}
}

// sameSum fails unless w's Written is the size and SHA-256 of file.
func sameSum(t *testing.T, w *FileWriter, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got, ok := w.Written(); !ok || got.Size != int64(len(b)) || got.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("Written() = %+v, %v; want size %d and %x", got, ok, len(b), sum)
	}
}

func sameFiles(t *testing.T, got, want string) {
	t.Helper()
	a, errA := os.ReadFile(got)
	b, errB := os.ReadFile(want)
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		i := 0
		for i < min(len(a), len(b)) && a[i] == b[i] {
			i++
		}
		t.Fatalf("writer wrote %d bytes, Save %d; first difference at byte %d", len(a), len(b), i)
	}
}

// A repeated id, even across batches and runs, fails Finish with a message
// naming it, and nothing replaces the directory's file.
func TestFileWriterRefusesRepeatedID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := newFileWriter(dir, Options{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{0, 1, 2, 3, 4, 5, 6, 7, 3, 9} {
		if err := w.Upsert(ctx, []index.Record{rec(fmt.Sprintf("id-%d", n), vector.Vector{Sparse: sp(float32(i), 1)})}); err != nil {
			t.Fatal(err)
		}
	}
	err = w.Finish(ctx, 10)
	if !errors.Is(err, index.ErrInvalidInput) || !strings.Contains(err.Error(), `records 3 and 8 have the same id "id-3"`) {
		t.Fatalf("finish with a repeated id: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("failed finish left %v", entries)
	}
	if err := w.Upsert(ctx, []index.Record{rec("z", vector.Vector{})}); err == nil {
		t.Fatal("upsert after a failed finish succeeded")
	}
}

// Finish refuses a count other than what was written and can then be
// called right; Search and Delete are refused; a bad batch writes nothing.
func TestFileWriterErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := NewFileWriter(dir, Options{Metric: index.Cosine})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Upsert(ctx, []index.Record{rec("a", vector.Vector{Dense: []float32{1, 2}})}); err != nil {
		t.Fatal(err)
	}
	if err := w.Upsert(ctx, []index.Record{rec("b", vector.Vector{Dense: []float32{1, 2, 3}})}); !errors.Is(err, index.ErrDimensionMismatch) {
		t.Fatalf("dimension mismatch: %v", err)
	}
	if err := w.Upsert(ctx, []index.Record{rec("c", vector.Vector{}), {ID: ""}}); !errors.Is(err, index.ErrInvalidInput) {
		t.Fatalf("empty id: %v", err)
	}
	if err := w.Finish(ctx, 2); !errors.Is(err, index.ErrInvalidInput) || !strings.Contains(err.Error(), "holds 1 records, want 2") {
		t.Fatalf("finish with the wrong count: %v", err)
	}
	if err := w.Finish(ctx, 1); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	hits := mustSearch(t, loaded, index.SearchRequest{Vector: vector.Vector{Dense: []float32{2, 4}}, TopK: 5})
	if len(hits) != 1 || hits[0].ID != "a" {
		t.Fatalf("hits %+v", hits)
	}
}

// Close abandons the file and removes every temporary file.
func TestFileWriterCloseCleansUp(t *testing.T) {
	dir := t.TempDir()
	w, err := newFileWriter(dir, Options{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		if err := w.Upsert(context.Background(), []index.Record{rec(fmt.Sprint(i), vector.Vector{Sparse: sp(1, 1, 2, 2)})}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("close left %v", entries)
	}
	if err := w.Finish(context.Background(), 9); err == nil {
		t.Fatal("finish after close succeeded")
	}
}

// The store and the writer keep nothing of the records they are given:
// records whose vectors are overwritten once Upsert returns make the same
// file as records left alone (the indexer reuses a batch's arrays for the
// next).
func TestUpsertKeepsNothingOfTheRecords(t *testing.T) {
	ctx := context.Background()
	for _, c := range writerCases() {
		t.Run(c.name, func(t *testing.T) {
			want := mustStore(t, c.opts)
			given := mustStore(t, c.opts)
			dir := t.TempDir()
			w, err := newFileWriter(dir, c.opts, 7)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, batch := range c.batches {
				mustUpsert(t, want, batch...)
				for _, store := range []index.Writer{given, w} {
					copied := cloneRecords(batch)
					if err := store.Upsert(ctx, copied); err != nil {
						t.Fatal(err)
					}
					scribble(copied)
				}
				n += len(batch)
			}
			if err := w.Finish(ctx, n); err != nil {
				t.Fatal(err)
			}
			wantDir, _ := savedDir(t, want)
			givenDir, _ := savedDir(t, given)
			sameFiles(t, filepath.Join(givenDir, File), filepath.Join(wantDir, File))
			sameFiles(t, filepath.Join(dir, File), filepath.Join(wantDir, File))
		})
	}
}

// cloneRecords returns records with vectors of their own.
func cloneRecords(records []index.Record) []index.Record {
	out := slices.Clone(records)
	for i := range out {
		out[i].Vector = out[i].Vector.Clone()
	}
	return out
}

// scribble overwrites every weight and term id of records' vectors.
func scribble(records []index.Record) {
	for _, r := range records {
		for i := range r.Vector.Dense {
			r.Vector.Dense[i] = 7
		}
		if s := r.Vector.Sparse; s != nil {
			for i := range s.Values {
				s.Indices[i], s.Values[i] = uint32(i), 7
			}
		}
	}
}
