package fieldhash_test

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/parentrag/parentrag/internal/fieldhash"
)

// recorder is a hash that keeps the bytes written into it.
type recorder struct{ bytes.Buffer }

func (r *recorder) Sum(b []byte) []byte { return append(b, r.Bytes()...) }
func (r *recorder) Size() int           { return r.Len() }
func (r *recorder) BlockSize() int      { return 1 }

// TestEncoding pins the bytes each field writes: revision names and ids
// already stored depend on them.
func TestEncoding(t *testing.T) {
	var r recorder
	fieldhash.WriteString(&r, "ab")
	fieldhash.Write(&r, []byte{7})
	fieldhash.WriteUint(&r, 0x0102)
	fieldhash.WriteBool(&r, true)
	fieldhash.WriteBool(&r, false)
	want := []byte{
		2, 0, 0, 0, 0, 0, 0, 0, 'a', 'b',
		1, 0, 0, 0, 0, 0, 0, 0, 7,
		2, 1, 0, 0, 0, 0, 0, 0,
		1, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
	}
	if !bytes.Equal(r.Bytes(), want) {
		t.Fatalf("wrote\n%v\nwant\n%v", r.Bytes(), want)
	}
	if got := fieldhash.AppendString(nil, "ab"); !bytes.Equal(got, want[:10]) {
		t.Fatalf("AppendString wrote %v, want %v", got, want[:10])
	}
}

// TestBoundariesDoNotShift checks that moving bytes from one field to the
// next changes the hash, which joining the fields would not.
func TestBoundariesDoNotShift(t *testing.T) {
	sum := func(fields ...string) [sha256.Size]byte {
		h := sha256.New()
		for _, f := range fields {
			fieldhash.WriteString(h, f)
		}
		var out [sha256.Size]byte
		h.Sum(out[:0])
		return out
	}
	if sum("ab", "c") == sum("a", "bc") || sum("abc") == sum("abc", "") {
		t.Fatal("fields that join to the same bytes hash the same")
	}
}
