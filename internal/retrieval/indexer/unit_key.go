package indexer

import (
	"crypto/sha256"
	"runtime/debug"
	"slices"

	"github.com/parentrag/parentrag/internal/fieldhash"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// unitVersion is the version of what a unit holds and of how it is made.
// It enters every unit key: bump it whenever splitting, opening sections,
// contexts, child texts or the pack format can change for the same
// input, so that units made by an older parentrag are never reused.
const unitVersion = 4

// unitKey is the content address of a unit: a SHA-256 over everything the
// unit depends on.
type unitKey [sha256.Size]byte

// unitScope hashes what every unit of a build depends on besides its
// document: the unit version and the parentrag build (module version and
// VCS revision, when the binary records them), the analyzer's name, the
// opening-section cap and heading separator, whether units hold analyses
// and contexts, and the caller's scope (the chunking policy: revision,
// spec, length unit, tokenizer).
func unitScope(shape unitShape, scope []byte) []byte {
	h := fieldhash.New()
	h.AddUint(unitVersion)
	h.AddString(buildIdentity())
	h.AddString(bm25.AnalyzerName)
	h.AddUint(LeadWords)
	h.AddString(HeadingSeparator)
	h.AddBool(shape.analysed)
	h.AddBool(shape.contexts)
	h.AddBytes(scope)
	sum := h.Sum()
	return sum[:]
}

// keyOf is the key of doc's unit in a build of the given scope: the scope,
// then the document's id, title, text, metadata (sorted by key) and page
// starts, each length-prefixed so that no two documents share a key.
func keyOf(scope []byte, doc hierarchy.Document) unitKey {
	h := fieldhash.New()
	h.AddRaw(scope)
	h.AddString(doc.ID)
	h.AddString(doc.Title)
	h.AddString(doc.Text)
	keys := make([]string, 0, len(doc.Metadata))
	for k := range doc.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h.AddUint(uint64(len(keys)))
	for _, k := range keys {
		h.AddString(k)
		h.AddString(doc.Metadata[k])
	}
	h.AddUint(uint64(len(doc.PageStarts)))
	for _, at := range doc.PageStarts {
		h.AddUint(uint64(at))
	}
	return h.Sum()
}

// buildIdentity names the parentrag build: its module version and VCS
// revision and state, as far as the binary records them.
func buildIdentity() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	id := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
			id += " " + s.Key + "=" + s.Value
		}
	}
	return id
}
