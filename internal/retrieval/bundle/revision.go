package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"sort"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// SchemaVersion changes whenever the way children are indexed changes, so
// that a new parentrag never serves an index built under old rules.
const SchemaVersion = 1

// SourceDigest returns a hash of every document's id, title, text and
// metadata, independent of the order the documents are given in (documents
// that share an id included). No metadata and empty metadata are the same.
func SourceDigest(docs []hierarchy.Document) string {
	type entry struct {
		id      string
		encoded []byte
	}
	entries := make([]entry, len(docs))
	for i, d := range docs {
		meta := []byte("null")
		if len(d.Metadata) > 0 {
			meta, _ = json.Marshal(d.Metadata) // map keys marshal sorted
		}
		var b []byte
		for _, part := range []string{d.ID, d.Title, d.Text, string(meta)} {
			b = appendField(b, part)
		}
		entries[i] = entry{id: d.ID, encoded: b}
	}
	// By id, then by content, so that the order of documents sharing an id
	// does not matter either.
	sort.Slice(entries, func(a, b int) bool {
		if entries[a].id != entries[b].id {
			return entries[a].id < entries[b].id
		}
		return bytes.Compare(entries[a].encoded, entries[b].encoded) < 0
	})
	h := sha256.New()
	for _, e := range entries {
		h.Write(e.encoded)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ParentStoreClaim names a revision kept on a volume claim of its own, for
// Revision; a revision kept in ConfigMaps or a local directory passes "".
const ParentStoreClaim = "claim"

// Revision returns the revision of an index: a hash of the policy revision,
// the source digest, the embedder configuration, where the children are
// indexed (an external store or segments; the embedded store adds
// nothing), where
// the parents are kept (a claim only; parentStore "" adds nothing) and the
// schema version. Anything that changes the index or where it is kept
// changes it; nothing else does.
func Revision(policyRevision, sourceDigest string, e Embedder, vs VectorStoreRef, parentStore string) string {
	h := sha256.New()
	cfg, _ := json.Marshal(e)
	var schema [8]byte
	binary.LittleEndian.PutUint64(schema[:], SchemaVersion)
	parts := []string{policyRevision, sourceDigest, string(cfg), string(schema[:])}
	if vs.Kind == VectorStoreMilvus {
		where := vs
		where.Collection = "" // named after the revision itself
		ref, _ := json.Marshal(where)
		parts = append(parts, string(ref))
	}
	if vs.Kind == VectorStoreSegments {
		parts = append(parts, "childIndex="+VectorStoreSegments)
	}
	if parentStore != "" {
		parts = append(parts, "parentStore="+parentStore)
	}
	for _, part := range parts {
		writeField(h, part)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// writeField writes a length-prefixed field, so that field boundaries
// cannot shift between inputs.
func writeField(h hash.Hash, s string) {
	h.Write(appendField(nil, s))
}

// appendField appends s to b with its length before it, as writeField
// hashes it.
func appendField(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}
