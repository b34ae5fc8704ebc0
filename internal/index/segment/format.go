package segment

import (
	"encoding/binary"
	"hash/crc32"
)

// Segment file layout, version 3. Every integer is little endian; every
// section is an array of uint32 (so 4-byte aligned, as the 64-byte header
// leaves them), but for the four byte arenas, each padded with zeros to a
// multiple of 4:
//
//	header: magic "PRGS" | version | flags | children | parents | terms |
//	        child postings | parent postings | term bytes | id bytes |
//	        documents | parent id bytes | document id bytes | zero |
//	        tokens (uint64: the children's lengths summed)
//	childTokens[children]      each child's length in tokens
//	parentFirst[parents+1]     each parent's first child; children in slot order
//	parentTokens[parents]      each parent's context length (0 without contexts)
//	termEnds[terms]            where each term ends in the term arena
//	childEnds[terms]           where each term's child postings end
//	child postings             [2 × child postings] by term, slots increasing:
//	                           slot | frequency
//	parentEnds[terms]          where each term's parent postings end
//	parent postings            [3 × parent postings] by term, parents increasing:
//	                           parent | context frequency | first child posting
//	idEnds[children]           where each child's id ends in the id arena
//	childOrdinals[children]    each child's ordinal within its document
//	parentDocs[parents]        each parent's document, an index of docEnds
//	parentIDEnds[parents]      where each parent's id ends in its arena
//	docEnds[documents]         where each document's id ends in its arena
//	term arena, id arena,      terms in strictly increasing byte order;
//	parent id arena,           a document's id once for a run of parents
//	document id arena          of that document
//	CRC-32C of every byte before it
//
// A term's parent postings are the parents whose context or some child
// holds it, with the term's frequency in the context (0 when only
// children hold it) and where, among the term's child postings, those of
// the parent's children begin: they run to where the next parent
// posting's begin (the term's last to its end). A posting's fields lie
// side by side because a search reads them together. A term's document
// frequency in the segment is its number of child postings.
const (
	fileMagic   = "PRGS"
	fileVersion = FormatVersion
	headerSize  = 64
	trailerSize = 4
	childWords  = 2 // the words of a child posting
	parentWords = 3 // the words of a parent posting
)

// flagContexts marks a segment whose parents have contexts.
const flagContexts = 1

// castagnoli is the CRC-32C table of the segment's checksum.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is the fixed start of a segment file.
type header struct {
	flags                         uint32
	children, parents, terms      uint32
	childPostings, parentPostings uint32
	termBytes, idBytes            uint32
	docs                          uint32
	parentIDBytes, docIDBytes     uint32
	tokens                        uint64
}

// appendTo appends the encoded header to b.
func (h *header) appendTo(b []byte) []byte {
	b = append(b, fileMagic...)
	for _, v := range []uint32{fileVersion, h.flags, h.children, h.parents, h.terms, h.childPostings, h.parentPostings, h.termBytes, h.idBytes, h.docs, h.parentIDBytes, h.docIDBytes, 0} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return binary.LittleEndian.AppendUint64(b, h.tokens)
}

// words is the number of uint32 words the sections after the header take.
func (h *header) words() uint64 {
	c, p, t, d := uint64(h.children), uint64(h.parents), uint64(h.terms), uint64(h.docs)
	cp, pp := uint64(h.childPostings), uint64(h.parentPostings)
	arenas := padded(h.termBytes) + padded(h.idBytes) + padded(h.parentIDBytes) + padded(h.docIDBytes)
	return c + (p + 1) + p + t + t + childWords*cp + t + parentWords*pp + c + c + p + p + d + arenas/4
}

// padded is n rounded up to a multiple of 4.
func padded(n uint32) uint64 { return (uint64(n) + 3) &^ 3 }

// appendWords appends ws to b, little endian.
func appendWords(b []byte, ws []uint32) []byte {
	for _, w := range ws {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

// appendArena appends arena to b, whose length is a multiple of 4, padded
// with zeros to keep it one.
func appendArena(b, arena []byte) []byte {
	b = append(b, arena...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// FormatVersion is the version of the segment format this package writes
// and reads: whatever keeps segments between builds keys them by it.
const FormatVersion = 3
