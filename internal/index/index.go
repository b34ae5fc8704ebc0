// Package index is where a revision's children are indexed and searched:
// the records and hits the indexes exchange with the rest of parentrag,
// and the interfaces they satisfy. The indexes live below it: embedded (in
// process, one file), segment (in process, the lexical index of large
// corpora), milvus and postgres (external databases).
package index

import (
	"context"
	"errors"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// Record is one indexed child: its id, the parent it points to, the source
// document, its ordinal within the document and its vector. Text and
// Metadata are the child's payload: stores that keep payloads beside the
// vectors (Milvus) store them, the embedded store ignores them.
type Record struct {
	ID       string
	ParentID string
	DocID    string
	Ordinal  int
	Vector   vector.Vector
	Text     string
	Metadata map[string]string
}

// Hit is one search result, best first within a result list.
type Hit struct {
	ID       string
	ParentID string
	DocID    string
	Ordinal  int
	Score    float32
	// Found says which searches of a hybrid query found the child, once
	// their rankings are fused; zero for the hits of one search.
	Found Found
}

// Found is a set of the searches of a hybrid query.
type Found uint8

// The searches of a hybrid query.
const (
	FoundSparse Found = 1 << iota
	FoundDense
)

// SearchRequest asks for the TopK records nearest to Vector. A sparse query
// searches the sparse field by inner product; a dense query the dense field
// by the store's metric.
type SearchRequest struct {
	Vector vector.Vector
	TopK   int
	// MaxPostings, when positive, bounds the work of a sparse search: a
	// query whose terms have more postings than this in the index fails
	// with ErrQueryTooCostly before anything is scanned. Stores that do
	// not scan postings (Milvus) ignore it.
	MaxPostings int
}

// ErrQueryTooCostly marks a query refused because answering it would cost
// more than a limit allows.
var ErrQueryTooCostly = errors.New("query too costly")

// PostingsCounter is a store that can tell, before searching, how many
// postings a sparse search of a vector scans: its cost.
type PostingsCounter interface {
	// Postings returns how many postings a search of v's sparse part
	// scans; 0 when it has none.
	Postings(v vector.Vector) int
}

// Searcher answers queries over an index of children. Its searches return
// at most TopK hits ordered by descending score, ties broken by ascending
// id, so results are deterministic.
type Searcher interface {
	// Search returns the req.TopK children nearest to req.Vector.
	Search(ctx context.Context, req SearchRequest) ([]Hit, error)
	// SearchFiltered is Search restricted to the children keep accepts:
	// the best req.TopK among them, as if the others were absent. keep
	// sees a hit without its score; an index calls it from one goroutine
	// at a time.
	SearchFiltered(ctx context.Context, req SearchRequest, keep func(Hit) bool) ([]Hit, error)
	// Count returns how many children the index holds.
	Count(ctx context.Context) (int, error)
}

// Writer is where a build puts the children it embeds.
type Writer interface {
	// Upsert indexes records, replacing those with the same ids. It keeps
	// nothing of records once it returns (it copies what it keeps), so
	// the caller may reuse their vectors' arrays.
	Upsert(ctx context.Context, records []Record) error
}

// ParentGrouper is a Searcher that can return the best children grouped
// by parent in one search (Milvus's grouping search), instead of the core
// over-fetching children until enough distinct parents appear.
type ParentGrouper interface {
	// SearchByParent returns the children of the req.TopK best parents,
	// at most groupSize per parent, each parent ranked by its best child;
	// hits are ordered by descending score, ties by ascending id.
	SearchByParent(ctx context.Context, req SearchRequest, groupSize int) ([]Hit, error)
}
