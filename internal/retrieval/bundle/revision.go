package bundle

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"sort"

	"github.com/parentrag/parentrag/internal/fieldhash"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// SchemaVersion changes whenever the way children are indexed changes, so
// that a new parentrag never serves an index built under old rules. 2:
// what fenced code quotes in prose is blanked before analysis.
const SchemaVersion = 2

// SourceDigest returns a hash of every document's id, title, text,
// metadata and page starts, independent of the order the documents are
// given in (documents that share an id included). No metadata and empty
// metadata are the same; a document without pages hashes as it did before
// documents had pages. It hashes the texts where they lie, without copying
// them.
func SourceDigest(docs []hierarchy.Document) string {
	type entry struct {
		doc  *hierarchy.Document
		meta string
	}
	entries := make([]entry, len(docs))
	for i := range docs {
		entries[i] = entry{doc: &docs[i], meta: "null"}
		if len(docs[i].Metadata) > 0 {
			meta, _ := json.Marshal(docs[i].Metadata) // map keys marshal sorted
			entries[i].meta = string(meta)
		}
		if len(docs[i].PageStarts) > 0 {
			pages, _ := json.Marshal(docs[i].PageStarts)
			entries[i].meta += "\x00pages" + string(pages)
		}
	}
	fields := func(e entry) [4]string { return [...]string{e.doc.ID, e.doc.Title, e.doc.Text, e.meta} }
	encoded := func(e entry) []byte {
		var b []byte
		for _, f := range fields(e) {
			b = fieldhash.AppendString(b, f)
		}
		return b
	}
	// By id, then by content, so that the order of documents sharing an id
	// does not matter either.
	sort.Slice(entries, func(a, b int) bool {
		if entries[a].doc.ID != entries[b].doc.ID {
			return entries[a].doc.ID < entries[b].doc.ID
		}
		return bytes.Compare(encoded(entries[a]), encoded(entries[b])) < 0
	})
	h := fieldhash.New()
	for _, e := range entries {
		for _, f := range fields(e) {
			h.AddString(f)
		}
	}
	sum := h.Sum()
	return hex.EncodeToString(sum[:])[:16]
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
	cfg, _ := json.Marshal(e)
	var schema [8]byte
	binary.LittleEndian.PutUint64(schema[:], SchemaVersion)
	parts := []string{policyRevision, sourceDigest, string(cfg), string(schema[:])}
	if vs.External() {
		where := vs
		where.Collection, where.Table = "", "" // named after the revision itself
		where.MaxConns = 0                     // a bound of the readers, not the index
		ref, _ := json.Marshal(where)
		parts = append(parts, string(ref))
	}
	if vs.Kind == VectorStoreSegments {
		parts = append(parts, "childIndex="+VectorStoreSegments)
	}
	if parentStore != "" {
		parts = append(parts, "parentStore="+parentStore)
	}
	h := fieldhash.New()
	for _, part := range parts {
		h.AddString(part)
	}
	sum := h.Sum()
	return hex.EncodeToString(sum[:])[:16]
}
