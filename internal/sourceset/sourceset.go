// Package sourceset reads the sources of a Corpus into documents, the same
// way in the operator and in an indexing Job: inline documents, ConfigMaps
// by name or by label selector, and files or archives over HTTP(S). A
// source or document that cannot be read is reported, never fatal.
package sourceset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/source/remote"
)

// MaxErrors bounds the errors kept, as status does.
const MaxErrors = 50

// Set is what a Corpus's sources yield: the documents that could be read,
// what could not, and what was read, so that an indexing Job can read
// exactly the same.
type Set struct {
	// Docs are the documents, in source order.
	Docs []hierarchy.Document
	// Errors report sources and documents that could not be read; at most
	// MaxErrors are kept, ErrorCount counts them all.
	Errors     []v1alpha1.SourceError
	ErrorCount int
	// Read lists every ConfigMap read, with the keys that became
	// documents, selectors expanded.
	Read []ConfigMapRead
	// Unkept counts documents of URL sources read by a lean Reader,
	// which keeps only what identifies them.
	Unkept int
	// Artifacts lists the Flux artifacts the sourceRef sources read.
	Artifacts []ArtifactRead
	// Blocked, when set, says why a sourceRef source stops the Corpus:
	// its object is missing, has no artifact, or may not be read.
	Blocked *Blocked
	// urls identify the content of each URL source read.
	urls []string
	// fromURL marks the documents that came from URL sources.
	fromURL map[string]bool
	// failed names sources with an error.
	failed map[string]bool
	// seen maps a document id to the source that gave it.
	seen map[string]string
	// digest is Digest's, once computed.
	digest string
	// held are the reads of remote sources whose documents the set uses,
	// until Release.
	held []remote.Result
}

// Release gives back what the documents of the set's remote sources take
// of the Fetchers' Memory: call it once the set's documents are no longer
// used (a build from them is over). Calling it again does nothing.
func (s *Set) Release() {
	for _, res := range s.held {
		res.Release()
	}
	s.held = nil
}

// ConfigMapRead is one ConfigMap a source read and the keys it used.
type ConfigMapRead struct {
	Source string   `json:"source"`
	Name   string   `json:"name"`
	Keys   []string `json:"keys"`
}

// newSet returns an empty set.
func newSet() *Set {
	return &Set{failed: map[string]bool{}, seen: map[string]string{}, fromURL: map[string]bool{}}
}

// add keeps a document unless it is empty or another source already gave
// its id, and reports whether it was kept.
func (s *Set) add(sourceName string, d hierarchy.Document) bool {
	if hierarchy.IsEmpty(d.Text) {
		s.fail(sourceName, d.ID, hierarchy.EmptyMessage(d.ID))
		return false
	}
	if other, dup := s.seen[d.ID]; dup {
		s.fail(sourceName, d.ID, fmt.Sprintf("document id %q is also given by source %q; this copy is skipped", d.ID, other))
		return false
	}
	s.seen[d.ID] = sourceName
	s.Docs = append(s.Docs, d)
	return true
}

// fail records a problem with a source or one of its documents.
func (s *Set) fail(sourceName, doc, message string) {
	s.failed[sourceName] = true
	s.ErrorCount++
	if len(s.Errors) < MaxErrors {
		s.Errors = append(s.Errors, v1alpha1.SourceError{Source: sourceName, Document: doc, Message: message})
	}
}

// FailedStrictly returns, sorted, the sources with failurePolicy Fail that
// reported an error: no revision may be built from the set while any
// does.
func (s *Set) FailedStrictly(sources []v1alpha1.Source) []string {
	var out []string
	for _, src := range sources {
		if src.FailurePolicy == v1alpha1.FailureFail && s.failed[src.Name] {
			out = append(out, src.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Count is how many documents the sources hold, kept or not.
func (s *Set) Count() int { return len(s.Docs) + s.Unkept }

// Digest identifies the documents, for the revision. Without URL sources
// it is bundle.SourceDigest of the documents. A URL source counts by what
// determines its documents instead (its spec and the sha256 of what was
// downloaded), which costs nothing to recompute while its content is
// cached and is the same whether or not its documents were kept. It is
// computed once.
func (s *Set) Digest() string {
	if s.digest == "" {
		s.digest = s.computeDigest()
	}
	return s.digest
}

// computeDigest computes Digest.
func (s *Set) computeDigest() string {
	if len(s.urls) == 0 {
		return bundle.SourceDigest(s.Docs)
	}
	var local []hierarchy.Document
	for _, d := range s.Docs {
		if !s.fromURL[d.ID] {
			local = append(local, d)
		}
	}
	h := sha256.New()
	h.Write([]byte(bundle.SourceDigest(local)))
	for _, u := range s.urls {
		h.Write([]byte{0})
		h.Write([]byte(u))
	}
	return hex.EncodeToString(h.Sum(nil))
}
