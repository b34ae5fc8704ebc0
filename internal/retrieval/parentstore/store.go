// Package parentstore keeps parents, the units returned to the reader, apart
// from the vector index. The files store writes a revision's parents once
// and reads them by offset, so memory holds only the offsets.
package parentstore

import (
	"context"
	"errors"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// ErrNotFound is wrapped by Get when a requested parent does not exist.
var ErrNotFound = errors.New("parent not found")

// Reader reads parents by id.
type Reader interface {
	// Get returns the parents with the given ids, in the same order. A
	// missing id is an error wrapping ErrNotFound: a child never resolves
	// to a missing parent silently.
	Get(ctx context.Context, ids []string) ([]hierarchy.Parent, error)
}
