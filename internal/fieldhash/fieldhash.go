// Package fieldhash writes fields into a hash so that where one field ends
// and the next begins cannot shift between inputs: every string goes in
// after its length, and every number at a fixed width. Revision names,
// unit keys, segment keys and parent and child ids are hashed this way,
// so the encoding never changes: a change would rename every revision and
// every id already stored.
package fieldhash

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"unsafe"
)

// Digest is a SHA-256 hash that fields are added to. Adding a field
// allocates nothing: a number is encoded in memory of the Digest's own
// (one encoded on the stack would escape to the heap through hash.Hash's
// Write), and strings are hashed where they lie. A parent's and a
// child's id, and every document's key, is a Digest, so one can serve
// many hashes one after the other (Reset).
type Digest struct {
	h   hash.Hash
	num [8]byte
	sum [sha256.Size]byte
}

// New returns an empty Digest.
func New() *Digest { return newDigest(sha256.New()) }

// newDigest returns a Digest adding its fields to h.
func newDigest(h hash.Hash) *Digest { return &Digest{h: h} }

// Reset empties d.
func (d *Digest) Reset() { d.h.Reset() }

// AddString adds s after its length, a little-endian uint64, hashing s
// where it lies, without copying it: a document's text is hashed at every
// build.
func (d *Digest) AddString(s string) {
	d.AddBytes(unsafe.Slice(unsafe.StringData(s), len(s))) // a hash only reads
}

// AddBytes adds b after its length, as AddString adds a string.
func (d *Digest) AddBytes(b []byte) {
	d.AddUint(uint64(len(b)))
	d.h.Write(b)
}

// AddUint adds v as a little-endian uint64.
func (d *Digest) AddUint(v uint64) {
	binary.LittleEndian.PutUint64(d.num[:], v)
	d.h.Write(d.num[:])
}

// AddBool adds a flag as AddUint adds 1 or 0.
func (d *Digest) AddBool(b bool) {
	if b {
		d.AddUint(1)
	} else {
		d.AddUint(0)
	}
}

// AddRaw adds b as it is, without its length: for a field whose length
// never varies or a prefix every hash of its kind shares.
func (d *Digest) AddRaw(b []byte) { d.h.Write(b) }

// AddSum adds another SHA-256 sum as it is, as AddRaw would, without
// letting sum escape to the heap.
func (d *Digest) AddSum(sum [sha256.Size]byte) {
	d.sum = sum
	d.h.Write(d.sum[:])
}

// Sum returns the hash of the fields added since d was made or reset.
func (d *Digest) Sum() [sha256.Size]byte {
	d.h.Sum(d.sum[:0])
	return d.sum
}

// AppendString appends s to b as AddString hashes it, so that fields can
// be compared in the order their hash reads them.
func AppendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}
