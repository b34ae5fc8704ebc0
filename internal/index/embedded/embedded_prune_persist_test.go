package embedded

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// savedFile saves e and returns the file's bytes and decoded header.
func savedFile(t *testing.T, e *Store) ([]byte, *fileHeader, string) {
	t.Helper()
	dir := t.TempDir()
	if err := e.Save(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, File)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := decodeHeader(b[:headerSize], formatVersion)
	if err != nil {
		t.Fatal(err)
	}
	return b, h, path
}

// blockMaximaAt returns where the block maxima start in a version 2 file.
func blockMaximaAt(h *fileHeader) int {
	return headerSize + int(16*h.records+h.idBytes+4*h.syms+h.symBytes+8*h.terms+8*h.postings)
}

// resealBody rewrites the trailer checksum of file b after a body edit.
func resealBody(b []byte, headerLen int) {
	body := b[headerLen : len(b)-trailerSize]
	binary.LittleEndian.PutUint32(b[len(b)-trailerSize:], crc32.Checksum(body, castagnoli))
}

// asVersion1 rewrites a version 2 file as version 1 wrote it: the shorter
// header and no block maxima.
func asVersion1(b []byte, h *fileHeader) []byte {
	at := blockMaximaAt(h)
	out := append([]byte{}, b[:headerSizeV1]...)
	binary.LittleEndian.PutUint32(out[8:], 1)
	binary.LittleEndian.PutUint32(out[96:], crc32.Checksum(out[:96], castagnoli))
	clear(out[100:])
	out = append(out, b[headerSize:at]...)
	out = append(out, b[at+4*int(h.blocks):]...)
	resealBody(out, headerSizeV1)
	return out
}

// A file written by format version 1 still loads: its block maxima are
// computed while loading, and pruned search answers exactly.
func TestLoadVersion1File(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	c := newPruneCorpusOf(t, r, stylePositive, 2000)
	b, h, path := savedFile(t, c.e)
	if h.blocks == 0 {
		t.Fatal("the corpus saved no block maxima")
	}
	if err := os.WriteFile(path, asVersion1(b, h), 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := Load(filepath.Dir(path))
	if err != nil {
		t.Fatalf("loading a version 1 file: %v", err)
	}
	for range 30 {
		req := index.SearchRequest{Vector: vector.Vector{Sparse: c.query(r)}, TopK: 5}
		sameHits(t, "version 1 file", searchBoth(t, old, req, nil), mustSearch(t, c.e, req))
	}
	// Saving the store loaded from a version 1 file writes version 2,
	// block maxima included, byte for byte what the original store saves.
	resaved, _, _ := savedFile(t, old)
	if v := binary.LittleEndian.Uint32(resaved[8:]); v != formatVersion || !bytes.Equal(resaved, b) {
		t.Fatalf("resaving a version 1 store wrote version %d, %d bytes; want version %d, the %d bytes of the original", v, len(resaved), formatVersion, len(b))
	}
}

// A file whose stored block maxima disagree with its postings is refused,
// even with valid checksums: a too-small maximum would prune true results.
func TestLoadRefusesWrongBlockMaxima(t *testing.T) {
	c := newPruneCorpusOf(t, rand.New(rand.NewPCG(3, 4)), stylePositive, 500)
	b, h, path := savedFile(t, c.e)
	at := blockMaximaAt(h)
	m := math.Float32frombits(binary.LittleEndian.Uint32(b[at:]))
	binary.LittleEndian.PutUint32(b[at:], math.Float32bits(m/2))
	resealBody(b, headerSize)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(filepath.Dir(path))
	if !errors.Is(err, ErrCorruptFile) || !strings.Contains(err.Error(), "block maxima") {
		t.Fatalf("load with a halved block maximum: %v; want ErrCorruptFile about block maxima", err)
	}
}

// A file of a format version this build does not know is refused with a
// message naming the versions it reads.
func TestLoadRefusesUnknownVersion(t *testing.T) {
	c := newPruneCorpusOf(t, rand.New(rand.NewPCG(3, 5)), stylePositive, 10)
	b, _, path := savedFile(t, c.e)
	binary.LittleEndian.PutUint32(b[8:], 3)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(filepath.Dir(path))
	if !errors.Is(err, ErrCorruptFile) || !strings.Contains(err.Error(), "unsupported format version 3 (this build reads 1 and 2)") {
		t.Fatalf("load of a version 3 file: %v", err)
	}
}
