// Package filesum gives the size and SHA-256 of a file's bytes as they are
// written, so that a bundle's manifest can list a file's checksum without
// reading the file back.
package filesum

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"path/filepath"

	"github.com/parentrag/parentrag/internal/directfile"
)

// Sum is the size of a file and the hex SHA-256 of its bytes.
type Sum struct {
	Size   int64
	SHA256 string
}

// Writer hashes every byte its underlying writer takes.
type Writer struct {
	w io.Writer
	h hash.Hash
	n int64
}

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, h: sha256.New()}
}

// Write writes p to the underlying writer and hashes the bytes it took,
// so that Sum covers exactly what was written even after a short write.
func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// Sum is the size and SHA-256 of everything written so far.
func (w *Writer) Sum() Sum {
	return Sum{Size: w.n, SHA256: hex.EncodeToString(w.h.Sum(nil))}
}

// WriteFile writes the file at path whole or not at all: write fills a
// temporary file beside it, through a buffer and past the page cache where
// the file system allows (directfile), which is synced, closed and renamed
// over path. It returns the size and SHA-256 of what was written. On
// failure the temporary file is removed and path is left as it was.
func WriteFile(path string, write func(io.Writer) error) (Sum, error) {
	f, err := directfile.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return Sum{}, err
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	hashed := NewWriter(f)
	buf := bufio.NewWriterSize(hashed, 64<<10)
	if err := errors.Join(write(buf), buf.Flush(), f.Close()); err != nil {
		return Sum{}, err
	}
	return hashed.Sum(), os.Rename(f.Name(), path)
}
