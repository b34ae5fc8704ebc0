package milvus

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// rowBatch is records turned into columns.
type rowBatch struct {
	ids, parents, docs, texts []string
	ordinals                  []int64
	sparse                    []entity.SparseEmbedding
	dense                     [][]float32
	meta                      [][]byte
}

func (s *Store) checkRecord(r *index.Record) error {
	switch {
	case r.ID == "":
		return fmt.Errorf("empty id: %w", index.ErrInvalidInput)
	case len(r.ID) > MaxIDLength:
		return fmt.Errorf("id %q is longer than %d bytes: %w", r.ID, MaxIDLength, index.ErrInvalidInput)
	case len(r.ParentID) > MaxParentIDLength:
		return fmt.Errorf("record %q: parent id is longer than %d bytes: %w", r.ID, MaxParentIDLength, index.ErrInvalidInput)
	case len(r.DocID) > MaxDocIDLength:
		return fmt.Errorf("record %q: doc id is longer than %d bytes: %w", r.ID, MaxDocIDLength, index.ErrInvalidInput)
	case !utf8.ValidString(r.ID) || !utf8.ValidString(r.ParentID) || !utf8.ValidString(r.DocID):
		return fmt.Errorf("record %q: ids must be valid UTF-8: %w", r.ID, index.ErrInvalidInput)
	}
	if err := checkSparse(r.Vector.Sparse, true); err != nil {
		return fmt.Errorf("record %q: %w", r.ID, err)
	}
	d := len(r.Vector.Dense)
	switch {
	case s.cfg.Dense == 0 && d > 0:
		return fmt.Errorf("record %q has a dense vector but the collection has no dense field: %w", r.ID, index.ErrDimensionMismatch)
	case s.cfg.Dense > 0 && d != s.cfg.Dense:
		return fmt.Errorf("record %q: dense vector has %d dims, collection has %d: %w", r.ID, d, s.cfg.Dense, index.ErrDimensionMismatch)
	}
	if err := checkFinite(r.Vector.Dense); err != nil {
		return fmt.Errorf("record %q: dense vector: %w", r.ID, err)
	}
	return nil
}

// checkSparse enforces what Milvus requires of a sparse row: equal
// lengths, strictly increasing indices below 2^32-1, finite values, and for
// stored rows no negative value.
func checkSparse(sp *vector.Sparse, stored bool) error {
	if sp == nil {
		return nil
	}
	if len(sp.Indices) != len(sp.Values) {
		return fmt.Errorf("sparse vector has %d indices but %d values: %w", len(sp.Indices), len(sp.Values), index.ErrInvalidInput)
	}
	for i, t := range sp.Indices {
		if i > 0 && t <= sp.Indices[i-1] {
			return fmt.Errorf("sparse indices not strictly increasing at position %d: %w", i, index.ErrInvalidInput)
		}
		if t == math.MaxUint32 {
			return fmt.Errorf("sparse index 2^32-1 is reserved by milvus: %w", index.ErrInvalidInput)
		}
	}
	if err := checkFinite(sp.Values); err != nil {
		return fmt.Errorf("sparse vector: %w", err)
	}
	if stored {
		for i, v := range sp.Values {
			if v < 0 {
				return fmt.Errorf("sparse value %d is negative, which milvus refuses: %w", i, index.ErrInvalidInput)
			}
		}
	}
	return nil
}

func checkFinite(v []float32) error {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("value %d is not finite: %w", i, index.ErrInvalidInput)
		}
	}
	return nil
}

// cutText makes text valid UTF-8 (Milvus refuses anything else) and cuts
// it to at most n bytes at a character boundary.
func cutText(text string, n int) string {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	if len(text) <= n {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n]
}

// rowSize estimates the bytes a record takes in an insert request.
func rowSize(r *index.Record) int {
	n := 64 + len(r.ID) + len(r.ParentID) + len(r.DocID) + min(len(r.Text), MaxTextLength) + 4*len(r.Vector.Dense)
	if r.Vector.Sparse != nil {
		n += 8 * len(r.Vector.Sparse.Indices)
	}
	for k, v := range r.Metadata {
		n += len(k) + len(v) + 8
	}
	return n
}

// batches splits records into runs of at most InsertBatch rows and about
// maxBatchBytes.
func (s *Store) batches(records []index.Record) [][]index.Record {
	return index.Batches(records, s.cfg.InsertBatch, maxBatchBytes, rowSize)
}

func (s *Store) columns(records []index.Record) (*rowBatch, error) {
	b := &rowBatch{}
	for i := range records {
		r := &records[i]
		b.ids = append(b.ids, r.ID)
		b.parents = append(b.parents, r.ParentID)
		b.docs = append(b.docs, r.DocID)
		b.ordinals = append(b.ordinals, int64(r.Ordinal))
		b.texts = append(b.texts, cutText(r.Text, MaxTextLength))
		var idx []uint32
		var val []float32
		if sp := r.Vector.Sparse; sp != nil {
			// The client sorts in place: hand it copies.
			idx = append(make([]uint32, 0, len(sp.Indices)), sp.Indices...)
			val = append(make([]float32, 0, len(sp.Values)), sp.Values...)
		}
		e, err := entity.NewSliceSparseEmbedding(idx, val)
		if err != nil {
			return nil, fmt.Errorf("record %q: %w", r.ID, err)
		}
		b.sparse = append(b.sparse, e)
		if s.cfg.Dense > 0 {
			b.dense = append(b.dense, r.Vector.Dense)
		}
		meta := r.Metadata
		if meta == nil {
			meta = map[string]string{}
		}
		js, err := json.Marshal(meta)
		if err != nil {
			return nil, fmt.Errorf("record %q: metadata: %w", r.ID, err)
		}
		b.meta = append(b.meta, js)
	}
	return b, nil
}

// option builds the column-based insert/upsert request of a batch.
func (s *Store) option(b *rowBatch) writeOption {
	opt := milvusclient.NewColumnBasedInsertOption(s.cfg.Collection,
		column.NewColumnVarChar(FieldID, b.ids),
		column.NewColumnVarChar(FieldParentID, b.parents),
		column.NewColumnVarChar(FieldDocID, b.docs),
		column.NewColumnInt64(FieldOrdinal, b.ordinals),
		column.NewColumnVarChar(FieldText, b.texts),
		column.NewColumnSparseVectors(FieldSparse, b.sparse),
		column.NewColumnJSONBytes(FieldMetadata, b.meta),
	)
	if s.cfg.Dense > 0 {
		return opt.WithFloatVectorColumn(FieldDense, s.cfg.Dense, b.dense)
	}
	return opt
}

// writeOption is what NewColumnBasedInsertOption returns.
type writeOption interface {
	milvusclient.InsertOption
	milvusclient.UpsertOption
}

// Insert writes records (vectors with their Text and Metadata payload) in
// batches of Config.InsertBatch and calls progress(done, total), when not
// nil, after each batch. Every record is validated before anything is
// written. A batch whose insert fails transiently is retried as an upsert,
// so a write that took effect although its answer was lost leaves no
// duplicate rows. Records are not deduplicated otherwise: insert each id
// once (Finish's row count check catches a repeat), or use Upsert.
func (s *Store) Insert(ctx context.Context, records []index.Record, progress func(done, total int)) error {
	return s.write(ctx, "insert", records, false, progress)
}

// Upsert replaces the records with the same ids and inserts the others,
// payloads included.
func (s *Store) Upsert(ctx context.Context, records []index.Record) error {
	return s.write(ctx, "upsert", records, true, nil)
}

func (s *Store) write(ctx context.Context, op string, records []index.Record, upsert bool, progress func(done, total int)) error {
	name := s.cfg.Collection
	for i := range records {
		if err := s.checkRecord(&records[i]); err != nil {
			return fmt.Errorf("%s into %s: %w", op, name, err)
		}
	}
	done := 0
	for _, batch := range s.batches(records) {
		cols, err := s.columns(batch)
		if err != nil {
			return fmt.Errorf("%s into %s: %w", op, name, err)
		}
		err = s.retry(ctx, func(ctx context.Context, attempt int) error {
			opt := s.option(cols)
			if upsert || attempt > 1 {
				_, err := s.cli.Upsert(ctx, opt)
				return err
			}
			_, err := s.cli.Insert(ctx, opt)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s into %s: rows %d-%d of %d: %w", op, name, done, done+len(batch)-1, len(records), notFound(err))
		}
		done += len(batch)
		if progress != nil {
			progress(done, len(records))
		}
	}
	return nil
}

// deleteBatch is the number of ids per delete expression.
const deleteBatch = 512

// Delete removes the records with the given ids; unknown ids are ignored.
func (s *Store) Delete(ctx context.Context, ids []string) error {
	name := s.cfg.Collection
	for start := 0; start < len(ids); start += deleteBatch {
		expr := InFilter(FieldID, ids[start:min(start+deleteBatch, len(ids))]...)
		err := s.retry(ctx, func(ctx context.Context, _ int) error {
			_, err := s.cli.Delete(ctx, milvusclient.NewDeleteOption(name).WithExpr(expr))
			return err
		})
		if err != nil {
			return fmt.Errorf("delete from %s: %w", name, notFound(err))
		}
	}
	return nil
}

// quote renders s as a Milvus string literal.
func quote(s string) string { return strconv.Quote(s) }

// InFilter is the expression `field in ["v1", "v2", ...]`.
func InFilter(field string, values ...string) string {
	var b strings.Builder
	b.WriteString(field)
	b.WriteString(" in [")
	for i, v := range values {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quote(v))
	}
	b.WriteByte(']')
	return b.String()
}
