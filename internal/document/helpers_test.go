package document_test

import (
	"testing"
	"time"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/document/documenttest"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// sectionBuilder splits at Markdown headings: parents of 50 to 4000
// characters, children of 300.
func sectionBuilder(t *testing.T) *hierarchy.Builder {
	t.Helper()
	compiled, err := policy.Compile(&v1alpha1.ChunkingPolicySpec{
		Separators: &v1alpha1.Separators{Preset: v1alpha1.SeparatorsMarkdown},
		Parent:     &v1alpha1.ChunkSize{ChunkSize: 4000, MinChunkSize: 50, Boundaries: v1alpha1.BoundariesSections},
		Child:      &v1alpha1.ChunkSize{ChunkSize: 300, ChunkOverlap: 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	return compiled.Builder
}

// bounded is documenttest.Bounded.
func bounded(t *testing.T, d time.Duration, maxBytes uint64, fn func()) {
	t.Helper()
	documenttest.Bounded(t, d, maxBytes, fn)
}

// skipShort skips a test that reads a file made to exhaust a reader: it
// runs for seconds, and for minutes under the race detector. The tests
// without -short (make test) run it.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("reads a file made to exhaust a reader, which takes seconds (-short)")
	}
}
