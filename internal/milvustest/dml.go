package milvustest

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
)

// rowsOf decodes and validates the rows of an insert or upsert against the
// collection's schema.
func (s *Server) rowsOf(c *collection, fields []*schemapb.FieldData, numRows uint32, schemaTS uint64, upsert bool) ([]*row, error) {
	n := int(numRows)
	if n <= 0 {
		return nil, merr.WrapErrParameterInvalidMsg("num_rows should be greater than 0")
	}
	if schemaTS != 0 && schemaTS < c.updated {
		return nil, merr.WrapErrCollectionSchemaMisMatch(c.name)
	}
	byName := make(map[string]*schemapb.FieldData, len(fields))
	for _, fd := range fields {
		name := fd.GetFieldName()
		if fd.GetIsDynamic() {
			if c.dynamic < 0 {
				return nil, merr.WrapErrParameterInvalidMsg("dynamic schema is not enabled on collection %s", c.name)
			}
			name = dynamicFieldName
		}
		if _, _, ok := c.field(name); !ok {
			return nil, merr.WrapErrParameterInvalidMsg("Attempt to insert an unexpected field `%s` to collection without enabling dynamic field", name)
		}
		if _, dup := byName[name]; dup {
			return nil, merr.WrapErrParameterInvalidMsg("duplicated field %s found", name)
		}
		byName[name] = fd
	}
	rows := make([]*row, n)
	for i := range rows {
		rows[i] = &row{vals: make([]any, len(c.fields))}
	}
	for pos, f := range c.fields {
		fd, given := byName[f.GetName()]
		if f.GetAutoID() {
			if given && !upsert {
				return nil, merr.WrapErrParameterInvalidMsg("the primary key %s is auto-generated and must not be passed", f.GetName())
			}
			if !given {
				for _, r := range rows {
					r.vals[pos] = s.state.id()
				}
				continue
			}
		}
		if !given {
			if f.GetIsDynamic() {
				for _, r := range rows {
					r.vals[pos] = &jsonValue{raw: []byte("{}"), v: map[string]any{}}
				}
				continue
			}
			dv, ok := defaultValue(f)
			if !ok {
				return nil, merr.WrapErrParameterInvalidMsg(
					"Insert missed an field `%s` to collection without set nullable==true or set default_value", f.GetName())
			}
			for _, r := range rows {
				r.vals[pos] = dv
			}
			continue
		}
		vals, err := decodeColumn(f, fd, n)
		if err != nil {
			return nil, err
		}
		if len(vals) != n {
			return nil, merr.WrapErrParameterInvalidMsg("the num_rows (%d) of field (%s) is not equal to passed num_rows (%d)", len(vals), f.GetName(), n)
		}
		for i, r := range rows {
			v := vals[i]
			if v == nil {
				if dv, ok := defaultValue(f); ok {
					v = dv
				}
			}
			r.vals[pos] = v
		}
	}
	return rows, nil
}

// Insert appends rows. Milvus does not deduplicate primary keys on insert:
// inserting an existing key keeps both rows (Count counts both; Search
// returns the key once).
func (s *Server) Insert(ctx context.Context, req *milvuspb.InsertRequest) (*milvuspb.MutationResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.MutationResult{Status: merr.Status(err)}, nil
	}
	rows, err := s.rowsOf(c, req.GetFieldsData(), req.GetNumRows(), req.GetSchemaTimestamp(), false)
	if err != nil {
		return &milvuspb.MutationResult{Status: merr.Status(err)}, nil
	}
	keys := make([]any, len(rows))
	succ := make([]uint32, len(rows))
	for i, r := range rows {
		c.add(r)
		keys[i] = r.vals[c.pk]
		succ[i] = uint32(i)
	}
	return &milvuspb.MutationResult{
		Status:    ok(),
		IDs:       idsOf(c.fields[c.pk], keys),
		SuccIndex: succ,
		InsertCnt: int64(len(rows)),
		Timestamp: s.state.ts(),
	}, nil
}

// Upsert replaces the rows with the given primary keys, inserting the
// missing ones.
func (s *Server) Upsert(ctx context.Context, req *milvuspb.UpsertRequest) (*milvuspb.MutationResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.MutationResult{Status: merr.Status(err)}, nil
	}
	if req.GetPartialUpdate() {
		return &milvuspb.MutationResult{Status: merr.Status(merr.WrapErrParameterInvalidMsg("partial update is not supported by milvustest"))}, nil
	}
	rows, err := s.rowsOf(c, req.GetFieldsData(), req.GetNumRows(), req.GetSchemaTimestamp(), true)
	if err != nil {
		return &milvuspb.MutationResult{Status: merr.Status(err)}, nil
	}
	// The last row of a key within the batch wins.
	last := make(map[any]int, len(rows))
	for i, r := range rows {
		last[r.vals[c.pk]] = i
	}
	keys := make([]any, len(rows))
	succ := make([]uint32, len(rows))
	for i, r := range rows {
		key := r.vals[c.pk]
		keys[i] = key
		succ[i] = uint32(i)
		if last[key] != i {
			continue
		}
		c.remove(key)
		c.add(r)
	}
	return &milvuspb.MutationResult{
		Status:    ok(),
		IDs:       idsOf(c.fields[c.pk], keys),
		SuccIndex: succ,
		UpsertCnt: int64(len(rows)),
		Timestamp: s.state.ts(),
	}, nil
}

// Delete removes the rows matching expr (typically `pk in [...]`).
func (s *Server) Delete(ctx context.Context, req *milvuspb.DeleteRequest) (*milvuspb.MutationResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.MutationResult{Status: merr.Status(err)}, nil
	}
	if req.GetExpr() == "" {
		return &milvuspb.MutationResult{Status: merr.Status(merr.WrapErrParameterInvalidMsg("expression is empty"))}, nil
	}
	pred, err := compileExpr(c, req.GetExpr(), req.GetExprTemplateValues())
	if err != nil {
		return &milvuspb.MutationResult{Status: merr.Status(err)}, nil
	}
	var keys []any
	seen := make(map[any]bool)
	c.liveRows(func(r *row) bool {
		if pred(r.vals) {
			k := r.vals[c.pk]
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		return true
	})
	n := 0
	for _, k := range keys {
		n += c.remove(k)
	}
	return &milvuspb.MutationResult{
		Status:    ok(),
		IDs:       idsOf(c.fields[c.pk], keys),
		DeleteCnt: int64(n),
		Timestamp: s.state.ts(),
	}, nil
}
