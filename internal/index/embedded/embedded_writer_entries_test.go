package embedded

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Entries give back the postings they encode, in chunks, with the block
// maxima of the whole list, and take far less room than the postings
// when these come in stretches of equal weights in consecutive slots.
func TestEntriesExpandToTheirPostings(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var list []posting
	slot := uint32(0)
	for len(list) < 3*expanderChunk {
		w := float32(r.IntN(4)) - 1.5
		n := 1 + r.IntN(2*blockSize)
		if r.IntN(3) == 0 {
			n = 1
		}
		for range n {
			list = append(list, posting{slot: slot, weight: w})
			slot++
		}
		slot += uint32(r.IntN(3) * r.IntN(1000)) // a gap ends a stretch too
	}
	list = append(list, posting{slot: math.MaxUint32, weight: -0.5})
	b := appendEntries(nil, list)
	if len(b) >= 8*len(list)/4 {
		t.Fatalf("%d postings took %d bytes", len(list), len(b))
	}
	var e entryExpander
	var got []posting
	e.reset()
	if err := e.expand(b, len(list), func(p []posting) { got = append(got, p...) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, list) {
		t.Fatal("expanded postings differ from the encoded ones")
	}
	if !slices.Equal(e.maxima, blockMaxima(list)) {
		t.Fatal("block maxima differ from the list's")
	}
	for _, bad := range []struct {
		name  string
		b     []byte
		count int
	}{
		{"too few postings", b, len(list) + 1},
		{"too many postings", b, len(list) - 1},
		{"a cut weight", b[:len(b)-1], len(list)},
		{"a cut stretch", []byte{1, 0, 0, 0, 0}, 2},
		{"a slot past the last", []byte{0xfe, 0xff, 0xff, 0xff, 0x1f, 0, 0, 0, 0, 2, 0, 0, 0, 0}, 2},
		{"a stretch past the last slot", []byte{0xfd, 0xff, 0xff, 0xff, 0x1f, 0, 0, 0, 0, 5}, 7},
	} {
		e.reset()
		if err := e.expand(bad.b, bad.count, func([]posting) {}); !errors.Is(err, errEntries) {
			t.Errorf("%s: got %v, want errEntries", bad.name, err)
		}
	}
}
