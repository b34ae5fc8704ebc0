package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// maxBatchBytes bounds the estimated size of one insert statement.
const maxBatchBytes = 16 << 20

// checkRecord enforces what the table and pgvector require of a row.
func (s *Store) checkRecord(r *index.Record) error {
	for _, id := range []string{r.ID, r.ParentID, r.DocID} {
		if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
			return fmt.Errorf("record %q: ids must be valid UTF-8 without NUL: %w", r.ID, index.ErrInvalidInput)
		}
	}
	switch {
	case r.ID == "":
		return fmt.Errorf("empty id: %w", index.ErrInvalidInput)
	case r.Ordinal < math.MinInt32 || r.Ordinal > math.MaxInt32:
		return fmt.Errorf("record %q: ordinal %d out of integer range: %w", r.ID, r.Ordinal, index.ErrInvalidInput)
	}
	if err := checkSparse(r.Vector.Sparse); err != nil {
		return fmt.Errorf("record %q: %w", r.ID, err)
	}
	d := len(r.Vector.Dense)
	switch {
	case s.cfg.Dense == 0 && d > 0:
		return fmt.Errorf("record %q has a dense vector but the table has no dense column: %w", r.ID, index.ErrDimensionMismatch)
	case s.cfg.Dense > 0 && d != s.cfg.Dense:
		return fmt.Errorf("record %q: dense vector has %d dims, table has %d: %w", r.ID, d, s.cfg.Dense, index.ErrDimensionMismatch)
	}
	if err := checkFinite(r.Vector.Dense); err != nil {
		return fmt.Errorf("record %q: dense vector: %w", r.ID, err)
	}
	return nil
}

// checkSparse enforces what a sparsevec holds: equal lengths, strictly
// increasing indices below SparseDim, finite values, at most
// MaxSparseTerms entries.
func checkSparse(sp *vector.Sparse) error {
	if sp == nil {
		return nil
	}
	switch {
	case len(sp.Indices) != len(sp.Values):
		return fmt.Errorf("sparse vector has %d indices but %d values: %w", len(sp.Indices), len(sp.Values), index.ErrInvalidInput)
	case len(sp.Indices) > MaxSparseTerms:
		return fmt.Errorf("sparse vector has %d terms, pgvector's sparsevec holds at most %d: %w", len(sp.Indices), MaxSparseTerms, index.ErrInvalidInput)
	}
	for i, t := range sp.Indices {
		if i > 0 && t <= sp.Indices[i-1] {
			return fmt.Errorf("sparse indices not strictly increasing at position %d: %w", i, index.ErrInvalidInput)
		}
		if t >= SparseDim {
			return fmt.Errorf("sparse index %d is beyond pgvector's %d dimensions: %w", t, SparseDim, index.ErrInvalidInput)
		}
	}
	if err := checkFinite(sp.Values); err != nil {
		return fmt.Errorf("sparse vector: %w", err)
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

// appendFloat writes x in the shortest form that reads back as the same
// float32, as pgvector reads it (strtof).
func appendFloat(b []byte, x float32) []byte {
	return strconv.AppendFloat(b, float64(x), 'g', -1, 32)
}

// sparseText is pgvector's text form of a sparse vector, 1-based:
// {1:0.5,8:2.5}/1000000000. Zero entries are left out, as pgvector drops
// them.
func sparseText(sp *vector.Sparse) string {
	b := []byte{'{'}
	first := true
	for i, t := range sp.Indices {
		if sp.Values[i] == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = strconv.AppendUint(b, uint64(t)+1, 10)
		b = append(b, ':')
		b = appendFloat(b, sp.Values[i])
	}
	b = append(b, "}/"...)
	return string(strconv.AppendInt(b, SparseDim, 10))
}

// termsText is the integer array of a sparse vector's terms with a
// non-zero weight: {3,17,40}.
func termsText(sp *vector.Sparse) string {
	b := []byte{'{'}
	if sp != nil {
		first := true
		for i, t := range sp.Indices {
			if sp.Values[i] == 0 {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = strconv.AppendUint(b, uint64(t), 10)
		}
	}
	return string(append(b, '}'))
}

// denseText is pgvector's text form of a dense vector: [0.5,-1,2].
func denseText(v []float32) string {
	b := []byte{'['}
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, x)
	}
	return string(append(b, ']'))
}

// cleanText makes text storable: valid UTF-8 without NUL, which
// PostgreSQL's text and jsonb refuse.
func cleanText(text string) string {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	return strings.ReplaceAll(text, "\x00", "\uFFFD")
}

// rowBatch is records turned into the columns of one statement.
type rowBatch struct {
	ids, parents, docs, texts, terms, meta []string
	ordinals                               []int32
	sparse, dense                          []*string
}

// columnsOf encodes a batch; a later record of an id replaces an earlier
// one, as in the other stores.
func (s *Store) columnsOf(records []index.Record) (*rowBatch, error) {
	last := make(map[string]int, len(records))
	for i := range records {
		last[records[i].ID] = i
	}
	b := &rowBatch{}
	for i := range records {
		r := &records[i]
		if last[r.ID] != i {
			continue
		}
		meta := make(map[string]string, len(r.Metadata))
		for k, v := range r.Metadata {
			meta[cleanText(k)] = cleanText(v)
		}
		js, err := json.Marshal(meta)
		if err != nil {
			return nil, fmt.Errorf("record %q: metadata: %w", r.ID, err)
		}
		b.ids, b.parents, b.docs = append(b.ids, r.ID), append(b.parents, r.ParentID), append(b.docs, r.DocID)
		b.ordinals, b.texts, b.meta = append(b.ordinals, int32(r.Ordinal)), append(b.texts, cleanText(r.Text)), append(b.meta, string(js))
		b.terms = append(b.terms, termsText(r.Vector.Sparse))
		var sp, dn *string
		if r.Vector.Sparse != nil {
			t := sparseText(r.Vector.Sparse)
			sp = &t
		}
		if len(r.Vector.Dense) > 0 {
			t := denseText(r.Vector.Dense)
			dn = &t
		}
		b.sparse, b.dense = append(b.sparse, sp), append(b.dense, dn)
	}
	return b, nil
}

// upsertSQL writes a batch of columns in one statement, replacing rows of
// the same ids.
func (s *Store) upsertSQL() string {
	cols := "id, parent_id, doc_id, ordinal, text, terms, sparse, metadata"
	sel := "u.id, u.parent_id, u.doc_id, u.ordinal, u.text, u.terms::integer[], u.sparse::sparsevec, u.metadata::jsonb"
	set := "parent_id = EXCLUDED.parent_id, doc_id = EXCLUDED.doc_id, ordinal = EXCLUDED.ordinal, text = EXCLUDED.text, terms = EXCLUDED.terms, sparse = EXCLUDED.sparse, metadata = EXCLUDED.metadata"
	if s.cfg.Dense > 0 {
		cols += ", dense"
		sel += ", u.dense::vector"
		set += ", dense = EXCLUDED.dense"
	}
	return `INSERT INTO ` + s.cfg.qualified(s.cfg.Table) + ` (` + cols + `)
SELECT ` + sel + `
FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
  AS u(id, parent_id, doc_id, ordinal, text, terms, sparse, dense, metadata)
ON CONFLICT (id) DO UPDATE SET ` + set
}

// rowSize estimates the bytes a record takes in a statement.
func rowSize(r *index.Record) int {
	n := 64 + len(r.ID) + len(r.ParentID) + len(r.DocID) + len(r.Text) + 12*len(r.Vector.Dense)
	if r.Vector.Sparse != nil {
		n += 24 * len(r.Vector.Sparse.Indices)
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

// Insert writes records in batches and calls progress(done, total), when
// not nil, after each batch. Every record is validated before anything is
// written. Rows of ids already there are replaced, so a build that runs
// again after an interruption leaves no duplicate.
func (s *Store) Insert(ctx context.Context, records []index.Record, progress func(done, total int)) error {
	for i := range records {
		if err := s.checkRecord(&records[i]); err != nil {
			return fmt.Errorf("insert into %s: %w", s.cfg.Table, err)
		}
	}
	sql := s.upsertSQL()
	done := 0
	for _, batch := range s.batches(records) {
		b, err := s.columnsOf(batch)
		if err != nil {
			return fmt.Errorf("insert into %s: %w", s.cfg.Table, err)
		}
		bctx, cancel := s.bound(ctx)
		_, err = s.pool.Exec(bctx, sql, b.ids, b.parents, b.docs, b.ordinals, b.texts, b.terms, b.sparse, b.dense, b.meta)
		cancel()
		if err != nil {
			return fmt.Errorf("insert into %s: rows %d-%d of %d: %w", s.cfg.Table, done, done+len(batch)-1, len(records), notFound(err))
		}
		done += len(batch)
		if progress != nil {
			progress(done, len(records))
		}
	}
	return nil
}

// Upsert implements index.Writer: Insert without progress.
func (s *Store) Upsert(ctx context.Context, records []index.Record) error {
	return s.Insert(ctx, records, nil)
}

// Delete removes the records with the given ids; unknown ids are ignored.
func (s *Store) Delete(ctx context.Context, ids []string) error {
	for start := 0; start < len(ids); start += s.cfg.InsertBatch {
		part := ids[start:min(start+s.cfg.InsertBatch, len(ids))]
		bctx, cancel := s.bound(ctx)
		_, err := s.pool.Exec(bctx, `DELETE FROM `+s.cfg.qualified(s.cfg.Table)+` WHERE id = ANY($1::text[])`, part)
		cancel()
		if err != nil {
			return fmt.Errorf("delete from %s: %w", s.cfg.Table, notFound(err))
		}
	}
	return nil
}
