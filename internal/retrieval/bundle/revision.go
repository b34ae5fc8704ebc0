package bundle

import (
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
// metadata, independent of the order the documents are given in.
func SourceDigest(docs []hierarchy.Document) string {
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return docs[order[a]].ID < docs[order[b]].ID })
	h := sha256.New()
	for _, i := range order {
		d := docs[i]
		meta, _ := json.Marshal(d.Metadata) // map keys marshal sorted
		for _, part := range []string{d.ID, d.Title, d.Text, string(meta)} {
			writeField(h, part)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Revision returns the revision of an index: a hash of the policy revision,
// the source digest, the embedder configuration and the schema version.
// Anything that changes the index changes it; nothing else does.
func Revision(policyRevision, sourceDigest string, e Embedder) string {
	h := sha256.New()
	cfg, _ := json.Marshal(e)
	var schema [8]byte
	binary.LittleEndian.PutUint64(schema[:], SchemaVersion)
	for _, part := range []string{policyRevision, sourceDigest, string(cfg), string(schema[:])} {
		writeField(h, part)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// writeField writes a length-prefixed field, so that field boundaries
// cannot shift between inputs.
func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}
