package glove

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
)

// cacheMagic opens a binary model file; its last byte is the format
// version.
var cacheMagic = []byte("parentrag-glove\x01")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteBinary writes m in the binary form ReadBinary reads: the magic, the
// dimensions and the number of words (uint32 little-endian), each word as
// a uint16 length and its bytes in rank order, every value as a float32,
// and a CRC-32C of all that. It writes under a temporary name, syncs and
// renames, so a reader never sees half a file.
func WriteBinary(path string, m *Model) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("glove: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(tmp, crc), 1<<20)
	err = writeModel(w, m)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = binary.Write(tmp, binary.LittleEndian, crc.Sum32())
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("glove: write %s: %w", path, err)
	}
	return nil
}

// writeModel writes everything but the checksum.
func writeModel(w *bufio.Writer, m *Model) error {
	w.Write(cacheMagic)
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(m.dims))
	w.Write(b[:])
	binary.LittleEndian.PutUint32(b[:], uint32(len(m.words)))
	w.Write(b[:])
	for _, word := range m.words {
		if len(word) > math.MaxUint16 {
			return fmt.Errorf("word of %d bytes", len(word))
		}
		binary.LittleEndian.PutUint16(b[:2], uint16(len(word)))
		w.Write(b[:2])
		w.WriteString(word)
	}
	for _, x := range m.vecs {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
		if _, err := w.Write(b[:]); err != nil {
			return err
		}
	}
	return nil
}

// ErrBadBinary marks a binary model file that is damaged or of another
// format: it should be written again from the JSON.
var ErrBadBinary = errors.New("not a sound binary glove model")

// ReadBinary reads a file WriteBinary wrote, checking its checksum and
// every length before it is trusted.
func ReadBinary(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("glove: %w", err)
	}
	m, err := decodeBinary(data)
	if err != nil {
		return nil, fmt.Errorf("glove: %s: %w: %w", path, ErrBadBinary, err)
	}
	return m, nil
}

// decodeBinary parses a whole binary model.
func decodeBinary(data []byte) (*Model, error) {
	head := len(cacheMagic) + 8
	if len(data) < head+4 || string(data[:len(cacheMagic)]) != string(cacheMagic) {
		return nil, fmt.Errorf("wrong magic or too short")
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(body):]) {
		return nil, fmt.Errorf("checksum mismatch")
	}
	dims := int(binary.LittleEndian.Uint32(body[len(cacheMagic):]))
	n := int(binary.LittleEndian.Uint32(body[len(cacheMagic)+4:]))
	if dims <= 0 || dims > maxDimensions || n <= 0 || n > maxWords {
		return nil, fmt.Errorf("%d words of %d dimensions", n, dims)
	}
	rest := body[head:]
	words := make([]string, n)
	for i := range words {
		if len(rest) < 2 {
			return nil, fmt.Errorf("word %d is cut short", i)
		}
		l := int(binary.LittleEndian.Uint16(rest))
		if len(rest) < 2+l {
			return nil, fmt.Errorf("word %d is cut short", i)
		}
		words[i], rest = string(rest[2:2+l]), rest[2+l:]
	}
	if len(rest) != 4*dims*n {
		return nil, fmt.Errorf("%d bytes of values, want %d", len(rest), 4*dims*n)
	}
	vecs := make([]float32, dims*n)
	for i := range vecs {
		vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
	}
	return newModel(dims, words, vecs)
}
