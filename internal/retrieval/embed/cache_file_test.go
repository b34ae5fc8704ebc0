package embed

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// testEntries returns n keys and dense vectors of varying lengths.
func testEntries(n int) ([][32]byte, []vector.Vector) {
	keys, vecs := make([][32]byte, n), make([]vector.Vector, n)
	for i := range n {
		text := fmt.Sprintf("entry %d", i)
		keys[i] = CacheKey{Model: "m"}.Sum(text)
		vecs[i] = vector.Vector{Dense: realVector(text, 1+i%5*7)}
	}
	return keys, vecs
}

func putOK(t *testing.T, s CacheStore, keys [][32]byte, vecs []vector.Vector) {
	t.Helper()
	if err := s.Put(keys, vecs); err != nil {
		t.Fatal(err)
	}
}

// wantServed checks that s serves want[i] under keys[i] for the first n
// keys and nothing for the rest.
func wantServed(t *testing.T, s CacheStore, keys [][32]byte, want []vector.Vector, n int) {
	t.Helper()
	got, found, err := s.Get(keys)
	if err != nil {
		t.Fatal(err)
	}
	for i := range keys {
		if found[i] != (i < n) {
			t.Fatalf("key %d found %v, want %v", i, found[i], i < n)
		}
	}
	sameBits(t, got[:n], want[:n])
}

func logPath(dir string) string { return filepath.Join(dir, cacheLogFile) }

func TestFileCacheKeepsExactBitsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	keys, vecs := testEntries(40)
	vecs[0].Dense = []float32{float32(math.Copysign(0, -1)), float32(math.Inf(1)), math.Float32frombits(0x7fc01234), math.SmallestNonzeroFloat32}
	c := openCache(t, dir)
	putOK(t, c, keys[:25], vecs[:25])
	putOK(t, c, keys[25:], vecs[25:])
	wantServed(t, c, keys, vecs, 40)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = openCache(t, dir)
	if c.Len() != 40 || c.Dropped() != 0 {
		t.Fatalf("reopened: %d entries, %d bytes dropped", c.Len(), c.Dropped())
	}
	wantServed(t, c, keys, vecs, 40)
}

// TestFileCacheRecoversDamagedTail: whatever a crash leaves after the last
// intact record is cut off on open; earlier entries are served and new ones
// can be added.
func TestFileCacheRecoversDamagedTail(t *testing.T) {
	lastSize := recordSize(len(testEntriesLast().Dense))
	cases := []struct {
		name   string
		damage func(f *os.File, size int64) error
		served int
	}{
		{"garbage appended", func(f *os.File, size int64) error {
			_, err := f.WriteAt([]byte("\x07not a record, a crash left this behind\xff\xff"), size)
			return err
		}, 10},
		{"zeros appended", func(f *os.File, size int64) error { return f.Truncate(size + 4096) }, 10},
		{"last record torn", func(f *os.File, size int64) error { return f.Truncate(size - 5) }, 9},
		{"last header torn", func(f *os.File, size int64) error { return f.Truncate(size - lastSize + 20) }, 9},
		{"last record's value flipped", func(f *os.File, size int64) error {
			_, err := f.WriteAt([]byte{0x5a}, size-8)
			return err
		}, 9},
		{"last record's length huge", func(f *os.File, size int64) error {
			_, err := f.WriteAt([]byte{0xff, 0xff, 0xff, 0x7f}, size-lastSize+32)
			return err
		}, 9},
		{"last record's length plausible", func(f *os.File, size int64) error {
			_, err := f.WriteAt([]byte{2, 0, 0, 0}, size-lastSize+32)
			return err
		}, 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			keys, vecs := testEntries(11)
			c := openCache(t, dir)
			putOK(t, c, keys[:10], vecs[:10])
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			damageLog(t, dir, tc.damage)

			c = openCache(t, dir)
			if c.Dropped() == 0 || c.Len() != tc.served {
				t.Fatalf("reopened: %d bytes dropped, %d entries, want some dropped and %d", c.Dropped(), c.Len(), tc.served)
			}
			wantServed(t, c, keys[:10], vecs[:10], tc.served)
			putOK(t, c, keys[10:], vecs[10:])
			_ = c.Close()
			c = openCache(t, dir)
			if c.Dropped() != 0 || c.Len() != tc.served+1 {
				t.Fatalf("after a new Put: %d bytes dropped, %d entries", c.Dropped(), c.Len())
			}
			wantServed(t, c, keys[10:], vecs[10:], 1)
		})
	}
}

// testEntriesLast is the tenth entry, the last one the damage cases write.
func testEntriesLast() vector.Vector {
	_, vecs := testEntries(10)
	return vecs[9]
}

// damageLog applies damage to the closed cache log in dir.
func damageLog(t *testing.T, dir string, damage func(f *os.File, size int64) error) {
	t.Helper()
	f, err := os.OpenFile(logPath(dir), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := damage(f, info.Size()); err != nil {
		t.Fatal(err)
	}
}

// TestFileCacheCorruptRecordIsAMiss: a record damaged on disk after it was
// indexed is reported missing, never returned, and can be stored again.
func TestFileCacheCorruptRecordIsAMiss(t *testing.T) {
	dir := t.TempDir()
	keys, vecs := testEntries(6)
	c := openCache(t, dir)
	putOK(t, c, keys, vecs)
	off := int64(len(cacheMagic))
	for _, v := range vecs[:3] {
		off += recordSize(len(v.Dense))
	}
	damageLog(t, dir, func(f *os.File, _ int64) error {
		_, err := f.WriteAt([]byte{0xde, 0xad}, off+recordHeader)
		return err
	})
	_, found, err := c.Get(keys)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, true, false, true, true}; !reflect.DeepEqual(found, want) {
		t.Fatalf("found %v, want %v", found, want)
	}
	putOK(t, c, keys[3:4], vecs[3:4])
	wantServed(t, c, keys, vecs, 6)
}

func TestFileCacheLockedWhileOpen(t *testing.T) {
	dir := t.TempDir()
	c := openCache(t, dir)
	_, err := OpenFileCache(dir)
	if !errors.Is(err, ErrCacheLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second open: %v, want ErrCacheLocked naming %s", err, dir)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	openCache(t, dir)
}

// TestFileCacheLockedAcrossProcesses re-runs this test binary as a second
// process, which must be refused the directory this one holds.
func TestFileCacheLockedAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("PARENTRAG_TEST_CACHE_CHILD"); dir != "" {
		_, err := OpenFileCache(dir)
		if errors.Is(err, ErrCacheLocked) {
			os.Exit(3)
		}
		fmt.Println("child open:", err)
		os.Exit(4)
	}
	dir := t.TempDir()
	c := openCache(t, dir)
	keys, vecs := testEntries(3)
	putOK(t, c, keys, vecs)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileCacheLockedAcrossProcesses$")
	cmd.Env = append(os.Environ(), "PARENTRAG_TEST_CACHE_CHILD="+dir)
	out, err := cmd.CombinedOutput()
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("second process: %v, %s; want it refused with ErrCacheLocked", err, out)
	}
	wantServed(t, c, keys, vecs, 3)
}

func TestFileCacheRefusesForeignLog(t *testing.T) {
	dir := t.TempDir()
	foreign := []byte("some other file that happens to be here\n")
	if err := os.WriteFile(logPath(dir), foreign, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFileCache(dir); err == nil || !strings.Contains(err.Error(), "not a parentrag embedding cache") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if got, _ := os.ReadFile(logPath(dir)); string(got) != string(foreign) {
		t.Fatal("a foreign log was modified")
	}
	openCache(t, t.TempDir()) // the refusal released the lock of its own dir
	if c, err := OpenFileCache(dir); err == nil {
		_ = c.Close()
		t.Fatal("opened a foreign log")
	} else if errors.Is(err, ErrCacheLocked) {
		t.Fatal("a failed open kept the lock")
	}
}

func TestFileCacheTornMagicIsRewritten(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(logPath(dir), []byte(cacheMagic[:7]), 0o644); err != nil {
		t.Fatal(err)
	}
	keys, vecs := testEntries(2)
	c := openCache(t, dir)
	putOK(t, c, keys, vecs)
	_ = c.Close()
	wantServed(t, openCache(t, dir), keys, vecs, 2)
}

func TestFileCachePutKeepsFirstVector(t *testing.T) {
	dir := t.TempDir()
	c := openCache(t, dir)
	keys, vecs := testEntries(2)
	other := vector.Vector{Dense: []float32{1, 2, 3}}
	putOK(t, c, [][32]byte{keys[0], keys[0], keys[1]}, []vector.Vector{vecs[0], other, vecs[1]})
	size := logSize(t, dir)
	putOK(t, c, keys[:1], []vector.Vector{other})
	if logSize(t, dir) != size || c.Len() != 2 {
		t.Fatalf("re-putting a stored key grew the log or the index (%d entries)", c.Len())
	}
	wantServed(t, c, keys, vecs, 2)
}

func logSize(t *testing.T, dir string) int64 {
	t.Helper()
	info, err := os.Stat(logPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

func TestFileCacheAfterClose(t *testing.T) {
	s := openCache(t, t.TempDir())
	keys, vecs := testEntries(1)
	putOK(t, s, keys, vecs)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, err := s.Get(keys); !errors.Is(err, ErrCacheClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if err := s.Put(keys, vecs); !errors.Is(err, ErrCacheClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
}

func TestFileCacheRejectsUncacheable(t *testing.T) {
	keys, vecs := testEntries(2)
	bad := map[string][]vector.Vector{
		"sparse":     {vecs[0], {Dense: []float32{1}, Sparse: &vector.Sparse{Indices: []uint32{1}, Values: []float32{1}}}},
		"empty":      {vecs[0], {}},
		"too long":   {vecs[0], {Dense: make([]float32, maxCacheDims+1)}},
		"count":      vecs[:1],
		"nil vector": {vecs[0], {Dense: nil}},
	}
	s := openCache(t, t.TempDir())
	for what, vs := range bad {
		if err := s.Put(keys, vs); err == nil {
			t.Errorf("the cache accepted %s", what)
		}
	}
	if _, found, _ := s.Get(keys); found[0] || found[1] {
		t.Error("the cache kept part of a refused Put")
	}
}

func TestPlanSpans(t *testing.T) {
	rec := recordSize(10) // 84 bytes
	at := func(n int64) indexEntry { return newIndexEntry(100+n*rec, 10) }
	big := newIndexEntry(100+50*rec, maxSpanBytes/4)
	cases := []struct {
		name    string
		entries []indexEntry
		want    []span
	}{
		{"none", []indexEntry{0, 0}, nil},
		{"neighbours in any order join", []indexEntry{at(2), 0, at(0), at(1)},
			[]span{{off: 100, size: 3 * rec, keys: []int{2, 3, 0}}}},
		{"a gap splits", []indexEntry{at(0), at(2)},
			[]span{{off: 100, size: rec, keys: []int{0}}, {off: 100 + 2*rec, size: rec, keys: []int{1}}}},
		{"a repeated key shares its span", []indexEntry{at(4), at(4), at(5)},
			[]span{{off: 100 + 4*rec, size: 2 * rec, keys: []int{0, 1, 2}}}},
		{"a span stops at maxSpanBytes", []indexEntry{at(49), big},
			[]span{{off: 100 + 49*rec, size: rec, keys: []int{0}}, {off: big.offset(), size: big.size(), keys: []int{1}}}},
	}
	for _, tc := range cases {
		if got := planSpans(tc.entries); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: spans %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestIndexEntryPacking(t *testing.T) {
	e := newIndexEntry(maxCacheOffset-1, maxCacheDims)
	if e.offset() != maxCacheOffset-1 || e.dims() != maxCacheDims || e.size() != recordSize(maxCacheDims) {
		t.Fatalf("entry unpacks to offset %d, dims %d", e.offset(), e.dims())
	}
}
