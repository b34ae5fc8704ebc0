package indexer

import (
	"encoding/hex"
	"hash/fnv"

	"github.com/parentrag/parentrag/internal/fieldhash"
	"github.com/parentrag/parentrag/internal/index/segment"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// segmentDocs is how many documents a segment holds on average: a run of
// documents ends after one whose id hashes to a multiple of it. A
// variable only so that tests can cut small corpora into many segments.
var segmentDocs uint64 = 4096

// segmentMaxText ends a run early, whatever the next document's id, once
// its documents hold this many bytes of text: it bounds what building
// one segment holds in memory.
var segmentMaxText = 32 << 20

// SegmentGroup is a run of documents that makes one segment, and the key
// naming that segment: a hex SHA-256 of everything its bytes depend on,
// so that a segment kept under its key can stand in for building it.
type SegmentGroup struct {
	Docs []hierarchy.Document
	Key  string
}

// GroupSegments cuts docs, in order, into the runs that make the
// segments of a build with this context weight and unit scope (see
// Options.UnitScope). A run ends after a document whose id alone chooses
// it (see endsRun), or once it holds segmentMaxText bytes of text, so an
// edit, an addition or a deletion changes the run holding the document it
// touches and, for a rename or a run cut short by size, the next one: the
// other runs, and their keys, stay as they were.
func GroupSegments(docs []hierarchy.Document, contextWeight float32, scope []byte) []SegmentGroup {
	unit := unitScope(unitShape{analysed: true, contexts: contextWeight > 0}, scope)
	var groups []SegmentGroup
	start, text := 0, 0
	for i, d := range docs {
		text += len(d.Text)
		if endsRun(d.ID) || text >= segmentMaxText || i == len(docs)-1 {
			run := docs[start : i+1 : i+1]
			groups = append(groups, SegmentGroup{Docs: run, Key: segmentKey(unit, run)})
			start, text = i+1, 0
		}
	}
	return groups
}

// endsRun reports whether a run of documents ends after the document
// with this id.
func endsRun(docID string) bool {
	h := fnv.New64a()
	h.Write([]byte(docID))
	return h.Sum64()%segmentDocs == 0
}

// segmentKey is the key of the segment of docs: the segment format, the
// unit scope, and each document's unit key in order.
func segmentKey(unit []byte, docs []hierarchy.Document) string {
	h := fieldhash.New()
	h.AddUint(segment.FormatVersion)
	h.AddBytes(unit)
	h.AddUint(uint64(len(docs)))
	for _, d := range docs {
		h.AddSum(keyOf(unit, d))
	}
	sum := h.Sum()
	return hex.EncodeToString(sum[:])
}
