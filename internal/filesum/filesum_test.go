package filesum

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestSumIsWhatWasWritten checks that Sum is the SHA-256 and size of the
// bytes the underlying writer took, over several writes.
func TestSumIsWhatWasWritten(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, part := range []string{"", "parent", " and ", "child\n"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	want := sha256.Sum256(out.Bytes())
	if got := w.Sum(); got.Size != int64(out.Len()) || got.SHA256 != hex.EncodeToString(want[:]) {
		t.Errorf("Sum = %+v, want size %d and %x", got, out.Len(), want)
	}
}

// shortWriter takes at most limit bytes in all, then fails.
type shortWriter struct {
	bytes.Buffer
	limit int
}

func (s *shortWriter) Write(p []byte) (int, error) {
	if room := s.limit - s.Len(); len(p) > room {
		s.Buffer.Write(p[:room])
		return room, errors.New("disk full")
	}
	return s.Buffer.Write(p)
}

// TestSumCoversAShortWrite checks that after a short write Sum covers
// the bytes written, not the bytes offered.
func TestSumCoversAShortWrite(t *testing.T) {
	out := &shortWriter{limit: 5}
	w := NewWriter(out)
	if n, err := w.Write([]byte("parentrag")); n != 5 || err == nil {
		t.Fatalf("Write = %d, %v; want 5 and an error", n, err)
	}
	want := sha256.Sum256([]byte("paren"))
	if got := w.Sum(); got.Size != 5 || got.SHA256 != hex.EncodeToString(want[:]) {
		t.Errorf("Sum = %+v, want size 5 and %x", got, want)
	}
}

// TestWriteFileIsWholeOrNothing checks that WriteFile puts what write
// wrote at the path with its sum, and that a failed write leaves the file
// that was there and no temporary file beside it.
func TestWriteFileIsWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "segment.seg")
	data := bytes.Repeat([]byte("children "), 20000)
	sum, err := WriteFile(path, func(w io.Writer) error { _, err := w.Write(data); return err })
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(data)
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) || sum != (Sum{Size: int64(len(data)), SHA256: hex.EncodeToString(want[:])}) {
		t.Fatalf("wrote %d bytes (%v) with sum %+v; want the data and its sum", len(got), err, sum)
	}
	failed := errors.New("source gone")
	if _, err := WriteFile(path, func(w io.Writer) error { w.Write([]byte("half")); return failed }); !errors.Is(err, failed) {
		t.Fatalf("a failing write: error %v, want %v", err, failed)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Error("a failed write changed the file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory after a failed write; want the file alone", len(entries))
	}
}
