// Package fieldhash writes fields into a hash so that where one field ends
// and the next begins cannot shift between inputs: every string goes in
// after its length, and every number at a fixed width. Revision names,
// unit keys, segment keys and parent and child ids are hashed this way,
// so the encoding never changes: a change would rename every revision and
// every id already stored.
package fieldhash

import (
	"encoding/binary"
	"hash"
	"unsafe"
)

// WriteString writes s into h after its length, a little-endian uint64.
// It hashes s where it lies, without copying it: a document's text is
// hashed at every build.
func WriteString(h hash.Hash, s string) {
	Write(h, unsafe.Slice(unsafe.StringData(s), len(s))) // a hash only reads
}

// Write writes b into h after its length, as WriteString writes a string.
func Write(h hash.Hash, b []byte) {
	WriteUint(h, uint64(len(b)))
	h.Write(b)
}

// WriteUint writes v into h as a little-endian uint64.
func WriteUint(h hash.Hash, v uint64) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], v)
	h.Write(n[:])
}

// WriteBool writes a flag into h as WriteUint writes 1 or 0.
func WriteBool(h hash.Hash, b bool) {
	if b {
		WriteUint(h, 1)
	} else {
		WriteUint(h, 0)
	}
}

// AppendString appends s to b as WriteString hashes it, so that fields
// can be compared in the order their hash reads them.
func AppendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}
