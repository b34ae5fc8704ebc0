package directfile

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// writeAll writes data with w in pieces of the given sizes (cycled), some
// from aligned memory, then closes it and returns the file's bytes.
func writeAll(t *testing.T, w *Writer, data []byte, sizes []int, fromAligned bool) []byte {
	t.Helper()
	for i := 0; len(data) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(data))
		piece := data[:n]
		if fromAligned {
			piece = append(alignedBuffer(n), piece...)
		}
		if got, err := w.Write(piece); got != n || err != nil {
			t.Fatalf("Write of %d bytes = %d, %v", n, got, err)
		}
		data = data[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(w.Name())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWriterWritesEveryByte writes files of lengths around the alignment
// and the buffer, in small, large, aligned and unaligned pieces, and
// checks that each holds exactly the bytes written.
func TestWriterWritesEveryByte(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lengths := []int{0, 1, Align - 1, Align, Align + 1, bufferSize - 1, bufferSize, bufferSize + 1, 3*bufferSize + 17}
	pieces := map[string][]int{
		"small":          {1, 7, 100, 3},
		"lines":          {1500, 900, 2100},
		"aligned blocks": {Align, 2 * Align},
		"large":          {bufferSize + Align, 5000},
	}
	for _, length := range lengths {
		data := make([]byte, length)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		for name, sizes := range pieces {
			for _, fromAligned := range []bool{false, true} {
				w, err := CreateTemp(t.TempDir(), "data.tmp-*")
				if err != nil {
					t.Fatal(err)
				}
				if got := writeAll(t, w, data, sizes, fromAligned); !bytes.Equal(got, data) {
					t.Fatalf("%d bytes written as %s pieces (aligned memory %v, direct %v): file holds %d bytes, not the same", length, name, fromAligned, w.Direct(), len(got))
				}
			}
		}
	}
}

// TestWriterFallsBackWhenADirectWriteIsRefused gives a direct writer an
// unaligned write, which the kernel refuses, and checks that the writer
// goes on ordinarily and the file holds every byte.
func TestWriterFallsBackWhenADirectWriteIsRefused(t *testing.T) {
	w, err := CreateTemp(t.TempDir(), "data.tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if !w.Direct() {
		w.Abort()
		t.Skip("the test directory's file system takes no direct writes, so none can be refused")
	}
	head := append(alignedBuffer(Align), bytes.Repeat([]byte("p"), Align)...)
	odd := []byte("an unaligned write")
	if _, err := w.Write(head); err != nil {
		t.Fatal(err)
	}
	if err := w.writeOut(odd); err != nil {
		t.Fatalf("an unaligned direct write: %v, want it made again ordinarily", err)
	}
	if w.Direct() {
		t.Error("still direct after a refused write")
	}
	got := writeAll(t, w, []byte("tail"), []int{4}, false)
	if want := string(head) + string(odd) + "tail"; string(got) != want {
		t.Fatalf("file holds %d bytes, want %d", len(got), len(want))
	}
}

// TestAbortRemovesTheFile checks that an aborted write leaves nothing.
func TestAbortRemovesTheFile(t *testing.T) {
	dir := t.TempDir()
	w, err := CreateTemp(dir, "data.tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half a parent"))
	w.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("%d entries after Abort, want none: %v", len(entries), filepath.Base(entries[0].Name()))
	}
}

// TestAlignedBufferIsAligned checks the buffer's start and capacity.
func TestAlignedBufferIsAligned(t *testing.T) {
	for _, n := range []int{1, Align, bufferSize} {
		b := alignedBuffer(n)
		if len(b) != 0 || cap(b) != n || !isAligned(b[:1]) {
			t.Fatalf("alignedBuffer(%d): len %d, cap %d, aligned %v", n, len(b), cap(b), isAligned(b[:1]))
		}
	}
}

// TestAfterClose checks that a write after Close fails, and that Abort
// after Close removes the file under its temporary name but not once it
// is renamed.
func TestAfterClose(t *testing.T) {
	dir := t.TempDir()
	for _, renamed := range []bool{false, true} {
		w, err := CreateTemp(dir, "data.tmp-*")
		if err != nil {
			t.Fatal(err)
		}
		if got := writeAll(t, w, []byte("parent"), []int{6}, false); string(got) != "parent" {
			t.Fatalf("file holds %q", got)
		}
		for _, p := range [][]byte{[]byte("late"), append(alignedBuffer(Align), make([]byte, Align)...)} {
			if _, err := w.Write(p); err == nil {
				t.Errorf("a write of %d bytes after Close succeeded", len(p))
			}
		}
		kept := filepath.Join(dir, "data")
		if renamed {
			if err := os.Rename(w.Name(), kept); err != nil {
				t.Fatal(err)
			}
		}
		w.Abort()
		if _, err := os.Stat(w.Name()); !os.IsNotExist(err) {
			t.Errorf("renamed %v: the temporary name is still there after Abort (%v)", renamed, err)
		}
		if got, err := os.ReadFile(kept); renamed && (err != nil || string(got) != "parent") {
			t.Errorf("the renamed file after Abort: %q, %v; want it kept", got, err)
		}
	}
}
