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
	d := fieldhash.NewDigestOf(&r)
	d.AddString("ab")
	d.AddBytes([]byte{7})
	d.AddUint(0x0102)
	d.AddBool(true)
	d.AddBool(false)
	d.AddRaw([]byte{9, 9})
	d.AddSum([sha256.Size]byte{31: 5})
	want := []byte{
		2, 0, 0, 0, 0, 0, 0, 0, 'a', 'b',
		1, 0, 0, 0, 0, 0, 0, 0, 7,
		2, 1, 0, 0, 0, 0, 0, 0,
		1, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		9, 9,
	}
	want = append(want, make([]byte, sha256.Size-1)...)
	want = append(want, 5)
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
		d := fieldhash.New()
		for _, f := range fields {
			d.AddString(f)
		}
		return d.Sum()
	}
	if sum("ab", "c") == sum("a", "bc") || sum("abc") == sum("abc", "") {
		t.Fatal("fields that join to the same bytes hash the same")
	}
}

// TestSumIsSHA256 checks that a Digest's sum is SHA-256 of what its fields
// add, and that Reset starts a new hash.
func TestSumIsSHA256(t *testing.T) {
	d := fieldhash.New()
	d.AddString("stale")
	d.Reset()
	d.AddString("ab")
	d.AddUint(3)
	want := sha256.Sum256(append(fieldhash.AppendString(nil, "ab"), 3, 0, 0, 0, 0, 0, 0, 0))
	if got := d.Sum(); got != want {
		t.Fatalf("sum %x, want %x", got, want)
	}
}

// TestAddingFieldsAllocatesNothing checks that numbers, flags, strings and
// sums are added without allocating.
func TestAddingFieldsAllocatesNothing(t *testing.T) {
	d := fieldhash.New()
	text := string(bytes.Repeat([]byte("x"), 100))
	allocs := testing.AllocsPerRun(100, func() {
		d.Reset()
		d.AddUint(7)
		d.AddBool(true)
		d.AddString(text)
		d.AddSum([sha256.Size]byte{1})
		_ = d.Sum()
	})
	if allocs != 0 {
		t.Fatalf("adding fields allocated %v times a hash, want 0", allocs)
	}
}
