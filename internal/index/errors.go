package index

import "errors"

// Errors the child indexes return. Each is wrapped with context, so match
// them with errors.Is.
var (
	// ErrDimensionMismatch reports a dense vector whose length differs from
	// the dimension fixed by the first dense vector the store accepted.
	ErrDimensionMismatch = errors.New("dense dimension mismatch")
	// ErrInvalidInput reports a malformed record or search request: an empty
	// id, unsorted or mismatched sparse indices, a non-finite value, a
	// non-positive TopK, or a query that sets both sparse and dense parts.
	ErrInvalidInput = errors.New("invalid input")
	// ErrClosed reports a call on an index after Close.
	ErrClosed = errors.New("vector store is closed")
)
