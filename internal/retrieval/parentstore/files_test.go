package parentstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

func writeParents(t *testing.T, dir string, parents []hierarchy.Parent) {
	t.Helper()
	w, err := NewFileWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parents {
		if err := w.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestFilesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	parents := []hierarchy.Parent{
		{ID: "a", DocID: "d1", Text: "first parent\nwith a newline", Start: 0,
			Children: []hierarchy.Span{{ID: "c1", Start: 0, End: 5}}},
		{ID: "b", DocID: "d1", Ordinal: 1, Text: "zweiter Elternteil — ünïcödé", Start: 28},
	}
	writeParents(t, dir, parents)
	store, err := OpenFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if store.Len() != 2 {
		t.Fatalf("Len() = %d, want 2", store.Len())
	}
	got, err := store.Get(context.Background(), []string{"b", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []hierarchy.Parent{parents[1], parents[0]}) {
		t.Fatalf("Get returned %+v", got)
	}
	if _, err := store.Get(context.Background(), []string{"missing"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(missing) error = %v, want ErrNotFound", err)
	}
}

func TestFilesRefusesForeignOrTruncatedIndex(t *testing.T) {
	dir := t.TempDir()
	writeParents(t, dir, []hierarchy.Parent{{ID: "a", Text: "x"}})
	idx := filepath.Join(dir, IndexFile)
	data, _ := os.ReadFile(idx)
	if err := os.WriteFile(idx, data[:len(data)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFiles(dir); err == nil {
		t.Fatal("truncated index opened without error")
	}
	if err := os.WriteFile(idx, []byte("not an index at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFiles(dir); err == nil {
		t.Fatal("foreign index opened without error")
	}
}

func TestFileWriterLeavesNothingBeforeClose(t *testing.T) {
	dir := t.TempDir()
	w, err := NewFileWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(hierarchy.Parent{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, DataFile)); !os.IsNotExist(err) {
		t.Fatalf("data file visible before Close: %v", err)
	}
}

// TestFileWriterAbort checks that an aborted writer leaves no file behind
// and that aborting after Close leaves the store whole.
func TestFileWriterAbort(t *testing.T) {
	p := hierarchy.Parent{ID: "d#p0", DocID: "d", Text: "text"}
	aborted := t.TempDir()
	w, err := NewFileWriter(aborted)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(p); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if entries, _ := os.ReadDir(aborted); len(entries) != 0 {
		t.Errorf("an aborted writer left %d files", len(entries))
	}
	closed := t.TempDir()
	if w, err = NewFileWriter(closed); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	for _, name := range []string{DataFile, IndexFile} {
		if _, err := os.Stat(filepath.Join(closed, name)); err != nil {
			t.Errorf("aborting after Close removed %s: %v", name, err)
		}
	}
}

// TestFileWriterWrittenIsTheFiles checks that Written is nothing before
// Close and, after, the size and SHA-256 of each file as it lies on disk.
func TestFileWriterWrittenIsTheFiles(t *testing.T) {
	dir := t.TempDir()
	w, err := NewFileWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 { // more than the write buffer holds
		if err := w.Add(hierarchy.Parent{ID: fmt.Sprintf("p%04d", i), DocID: "d", Ordinal: i, Text: strings.Repeat("parent text ", 40)}); err != nil {
			t.Fatal(err)
		}
	}
	if w.Written() != nil {
		t.Error("Written lists files before Close")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	written := w.Written()
	for _, name := range []string{DataFile, IndexFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := written[name]; got.Size != int64(len(b)) || got.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("Written()[%s] = %+v, want size %d and %x", name, got, len(b), sum)
		}
	}
	if len(written) != 2 {
		t.Errorf("Written lists %d files, want 2", len(written))
	}
}

// TestPacksReadAsOneStore checks that stores opened as packs answer for
// every parent of every pack, and that an id in two packs is refused.
func TestPacksReadAsOneStore(t *testing.T) {
	one, two := t.TempDir(), t.TempDir()
	first := []hierarchy.Parent{{ID: "a", DocID: "d1", Text: "alpha"}, {ID: "b", DocID: "d1", Ordinal: 1, Text: "beta"}}
	second := []hierarchy.Parent{{ID: "c", DocID: "d2", Text: "gamma"}}
	writeParents(t, one, first)
	writeParents(t, two, second)
	store, err := OpenPacks([]string{one, two})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if store.Len() != 3 {
		t.Fatalf("Len() = %d, want 3", store.Len())
	}
	got, err := store.Get(context.Background(), []string{"c", "a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []hierarchy.Parent{second[0], first[0], first[1]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Get returned %+v, want %+v", got, want)
	}
	again := t.TempDir()
	writeParents(t, again, first[1:])
	if _, err := OpenPacks([]string{one, two, again}); err == nil || !strings.Contains(err.Error(), "parent b is in another pack") {
		t.Fatalf("a parent in two packs: error %v", err)
	}
}
