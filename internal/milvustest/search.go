package milvustest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
)

// annSearch is one parsed search request.
type annSearch struct {
	field        *schemapb.FieldSchema
	pos          int
	metric       string
	topk         int
	offset       int
	roundDecimal int
	groupPos     int // position of the group_by_field, -1 without grouping
	groupSize    int
	queries      []any // *sparseVec or []float32
	pred         predicate
}

// hit is one scored row.
type hit struct {
	r     *row
	score float32
}

// parseSearch parses search_params and the placeholder group of req
// against collection c.
func parseSearch(c *collection, req *milvuspb.SearchRequest) (*annSearch, error) {
	params := kv(req.GetSearchParams())
	as := &annSearch{groupPos: -1, groupSize: 1, roundDecimal: -1}

	annsField := params["anns_field"]
	if annsField == "" {
		var vecs []string
		for _, f := range c.fields {
			if isVector(f.GetDataType()) {
				vecs = append(vecs, f.GetName())
			}
		}
		if len(vecs) != 1 {
			return nil, merr.WrapErrParameterInvalidMsg("multiple anns_fields exist, please specify a anns_field in search_params")
		}
		annsField = vecs[0]
	}
	f, pos, found := c.field(annsField)
	if !found || !isVector(f.GetDataType()) {
		return nil, merr.WrapErrFieldNotFound(annsField, "failed to get field schema by name: "+annsField)
	}
	as.field, as.pos = f, pos
	ix := c.indexOn(f.GetName())
	if ix == nil {
		return nil, merr.WrapErrIndexNotFoundForCollection(c.name, "there is no index on field "+annsField)
	}
	as.metric = ix.metricType()
	if mt := strings.ToUpper(params["metric_type"]); mt != "" && mt != as.metric {
		return nil, merr.WrapErrParameterInvalid(as.metric, mt, "metric type not match")
	}

	var err error
	if as.topk, err = strconv.Atoi(params["topk"]); err != nil {
		return nil, merr.WrapErrParameterInvalidMsg("%s [%s] is invalid", "topk", params["topk"])
	}
	if s := params["offset"]; s != "" {
		if as.offset, err = strconv.Atoi(s); err != nil || as.offset < 0 {
			return nil, merr.WrapErrParameterInvalidMsg("offset [%s] is invalid", s)
		}
	}
	if as.topk <= 0 || as.topk > maxTopK {
		return nil, merr.WrapErrParameterInvalidMsg("topk [%d] is invalid, it should be in range [1, %d]", as.topk, maxTopK)
	}
	if as.topk+as.offset > maxTopK {
		return nil, merr.WrapErrParameterInvalidMsg("topk+offset [%d] is invalid, it should be in range [1, %d]", as.topk+as.offset, maxTopK)
	}
	if s := params["round_decimal"]; s != "" {
		if as.roundDecimal, err = strconv.Atoi(s); err != nil || as.roundDecimal < -1 || as.roundDecimal > 6 {
			return nil, merr.WrapErrParameterInvalidMsg("round_decimal %s is invalid, should be -1 or an integer in range [0, 6]", s)
		}
	}
	if s := params["params"]; s != "" {
		var ann map[string]any
		if err := json.Unmarshal([]byte(s), &ann); err != nil {
			return nil, merr.WrapErrParameterInvalidMsg("search params are not valid JSON: %v", err)
		}
		if ef, has := ann["ef"]; has && ix.indexType() == "HNSW" {
			e, _ := ef.(float64)
			if int(e) < as.topk+as.offset {
				return nil, merr.WrapErrParameterInvalidMsg("ef(%d) should be larger than k(%d)", int(e), as.topk+as.offset)
			}
		}
		if _, has := ann["radius"]; has {
			return nil, merr.WrapErrParameterInvalidMsg("range search is not supported by milvustest")
		}
	}
	if g := params["group_by_field"]; g != "" {
		gf, gpos, found := c.field(g)
		if !found {
			return nil, merr.WrapErrFieldNotFound(g, "groupBy field not found in schema")
		}
		switch gf.GetDataType() {
		case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
			schemapb.DataType_Int64, schemapb.DataType_VarChar:
		default:
			return nil, merr.WrapErrParameterInvalidMsg("group by field %s of type %s is not supported", g, gf.GetDataType())
		}
		as.groupPos = gpos
		if s := params["group_size"]; s != "" {
			if as.groupSize, err = strconv.Atoi(s); err != nil || as.groupSize <= 0 {
				return nil, merr.WrapErrParameterInvalidMsg("group_size [%s] is invalid", s)
			}
		}
	}

	var phg commonpb.PlaceholderGroup
	if err := proto.Unmarshal(req.GetPlaceholderGroup(), &phg); err != nil {
		return nil, merr.WrapErrParameterInvalidMsg("invalid placeholder group: %v", err)
	}
	if len(phg.GetPlaceholders()) != 1 {
		return nil, merr.WrapErrParameterInvalidMsg("expected one placeholder, got %d", len(phg.GetPlaceholders()))
	}
	ph := phg.GetPlaceholders()[0]
	if req.GetNq() != 0 && int(req.GetNq()) != len(ph.GetValues()) {
		return nil, merr.WrapErrParameterInvalidMsg("nq (%d) does not match the number of query vectors (%d)", req.GetNq(), len(ph.GetValues()))
	}
	if len(ph.GetValues()) == 0 {
		return nil, merr.WrapErrParameterInvalidMsg("nq [0] is invalid, nq should be in range [1, 16384]")
	}
	switch f.GetDataType() {
	case schemapb.DataType_SparseFloatVector:
		if ph.GetType() != commonpb.PlaceholderType_SparseFloatVector {
			return nil, merr.WrapErrParameterInvalidMsg("vector type must be the same, field %s - type %s, search info type %s",
				f.GetName(), f.GetDataType(), ph.GetType())
		}
		for _, b := range ph.GetValues() {
			sv, err := decodeSparse(b)
			if err != nil {
				return nil, err
			}
			as.queries = append(as.queries, sv)
		}
	case schemapb.DataType_FloatVector:
		if ph.GetType() != commonpb.PlaceholderType_FloatVector {
			return nil, merr.WrapErrParameterInvalidMsg("vector type must be the same, field %s - type %s, search info type %s",
				f.GetName(), f.GetDataType(), ph.GetType())
		}
		dim := dimOf(f)
		for _, b := range ph.GetValues() {
			if len(b) != 4*dim {
				return nil, merr.WrapErrParameterInvalidMsg("the dim (%d) of field data(%s) is not equal to schema dim (%d)", len(b)/4, f.GetName(), dim)
			}
			v := make([]float32, dim)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
			as.queries = append(as.queries, v)
		}
	default:
		return nil, merr.WrapErrParameterInvalidMsg("search on field %s of type %s is not supported", f.GetName(), f.GetDataType())
	}
	as.pred, err = compileExpr(c, req.GetDsl(), req.GetExprTemplateValues())
	if err != nil {
		return nil, err
	}
	return as, nil
}

// better reports whether a ranks before b under metric: a higher score, or
// for L2 a smaller distance; ties go to the row inserted first.
func better(metric string, a, b hit) bool {
	if a.score != b.score {
		if metric == "L2" {
			return a.score < b.score
		}
		return a.score > b.score
	}
	return a.r.seq < b.r.seq
}

// score scores row r against query q, ok false when r does not match (no
// vector, or for sparse no shared term).
func (as *annSearch) score(q any, r *row) (float32, bool) {
	switch qv := q.(type) {
	case *sparseVec:
		sv, ok := r.vals[as.pos].(*sparseVec)
		if !ok {
			return 0, false
		}
		return qv.dot(sv)
	case []float32:
		v, ok := r.vals[as.pos].([]float32)
		if !ok {
			return 0, false
		}
		switch as.metric {
		case "L2":
			var sum float32
			for i := range qv {
				d := qv[i] - v[i]
				sum += d * d
			}
			return sum, true
		case "COSINE":
			var dot, nq, nv float64
			for i := range qv {
				dot += float64(qv[i]) * float64(v[i])
				nq += float64(qv[i]) * float64(qv[i])
				nv += float64(v[i]) * float64(v[i])
			}
			if nq == 0 || nv == 0 {
				return 0, true
			}
			return float32(dot / math.Sqrt(nq*nv)), true
		default:
			var sum float32
			for i := range qv {
				sum += qv[i] * v[i]
			}
			return sum, true
		}
	}
	return 0, false
}

// run answers one query: every live row passing the filter is scored
// (exactly), duplicates of a primary key keep their best row, and the
// best topk (groups) after offset are returned.
func (as *annSearch) run(c *collection, q any) []hit {
	var hits []hit
	c.liveRows(func(r *row) bool {
		if !as.pred(r.vals) {
			return true
		}
		if s, ok := as.score(q, r); ok && !math.IsNaN(float64(s)) {
			hits = append(hits, hit{r: r, score: s})
		}
		return true
	})
	slices.SortFunc(hits, func(a, b hit) int {
		if better(as.metric, a, b) {
			return -1
		}
		if better(as.metric, b, a) {
			return 1
		}
		return 0
	})
	if len(c.byPK) != c.live {
		seen := make(map[any]bool, len(hits))
		kept := hits[:0]
		for _, h := range hits {
			k := h.r.vals[c.pk]
			if !seen[k] {
				seen[k] = true
				kept = append(kept, h)
			}
		}
		hits = kept
	}
	if as.groupPos >= 0 {
		return as.group(hits)
	}
	if as.offset >= len(hits) {
		return nil
	}
	hits = hits[as.offset:]
	return hits[:min(len(hits), as.topk)]
}

// group keeps at most groupSize hits of each group_by_field value and the
// best topk groups after offset, laid out group after group.
func (as *annSearch) group(hits []hit) []hit {
	type group struct{ hits []hit }
	var order []any
	groups := make(map[any]*group)
	need := as.topk + as.offset
	for _, h := range hits {
		key := h.r.vals[as.groupPos]
		g := groups[key]
		if g == nil {
			if len(order) == need {
				continue
			}
			g = &group{}
			groups[key] = g
			order = append(order, key)
		}
		if len(g.hits) < as.groupSize {
			g.hits = append(g.hits, h)
		}
	}
	var out []hit
	for i, key := range order {
		if i < as.offset {
			continue
		}
		out = append(out, groups[key].hits...)
	}
	return out
}

func roundScore(s float32, decimals int) float32 {
	if decimals < 0 {
		return s
	}
	p := math.Pow(10, float64(decimals))
	return float32(math.Round(float64(s)*p) / p)
}

// outputFields resolves requested output field names to schema fields.
func outputFields(c *collection, names []string) ([]*schemapb.FieldSchema, []string, error) {
	var out []*schemapb.FieldSchema
	var outNames []string
	seen := make(map[string]bool)
	add := func(f *schemapb.FieldSchema) {
		if !seen[f.GetName()] {
			seen[f.GetName()] = true
			out = append(out, f)
		}
	}
	for _, n := range names {
		switch {
		case n == "*":
			for _, f := range c.fields {
				add(f)
			}
		default:
			if f, _, found := c.field(n); found {
				add(f)
			} else if c.dynamic >= 0 {
				add(c.fields[c.dynamic])
			} else {
				return nil, nil, merr.WrapErrFieldNotFound(n, fmt.Sprintf("field %s not exist", n))
			}
		}
		outNames = append(outNames, n)
	}
	return out, outNames, nil
}

func columns(c *collection, fields []*schemapb.FieldSchema, rows []*row) []*schemapb.FieldData {
	out := make([]*schemapb.FieldData, 0, len(fields))
	for _, f := range fields {
		_, pos, _ := c.field(f.GetName())
		vals := make([]any, len(rows))
		for i, r := range rows {
			vals[i] = r.vals[pos]
		}
		out = append(out, encodeColumn(f, vals))
	}
	return out
}

// Search runs an exact search on a loaded collection.
func (s *Server) Search(ctx context.Context, req *milvuspb.SearchRequest) (*milvuspb.SearchResults, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.SearchResults{Status: merr.Status(err)}, nil
	}
	if err := c.requireLoaded(); err != nil {
		return &milvuspb.SearchResults{Status: merr.Status(err)}, nil
	}
	as, err := parseSearch(c, req)
	if err != nil {
		return &milvuspb.SearchResults{Status: merr.Status(err)}, nil
	}
	fields, names, err := outputFields(c, req.GetOutputFields())
	if err != nil {
		return &milvuspb.SearchResults{Status: merr.Status(err)}, nil
	}
	per := make([][]hit, len(as.queries))
	for i, q := range as.queries {
		per[i] = as.run(c, q)
	}
	res := resultData(c, per, as.topk, as.roundDecimal, fields, names)
	if as.groupPos >= 0 {
		gf := c.fields[as.groupPos]
		var vals []any
		for _, hs := range per {
			for _, h := range hs {
				vals = append(vals, h.r.vals[as.groupPos])
			}
		}
		res.GroupByFieldValue = encodeColumn(gf, vals)
	}
	return &milvuspb.SearchResults{Status: ok(), Results: res, CollectionName: c.name}, nil
}

// resultData lays out per-query hits the way Milvus returns them: scores,
// ids and output columns concatenated over queries, with topks counting
// each query's hits.
func resultData(c *collection, per [][]hit, topk, roundDecimal int, fields []*schemapb.FieldSchema, names []string) *schemapb.SearchResultData {
	res := &schemapb.SearchResultData{
		NumQueries:       int64(len(per)),
		TopK:             int64(topk),
		OutputFields:     names,
		PrimaryFieldName: c.fields[c.pk].GetName(),
	}
	var keys []any
	var rows []*row
	for _, hs := range per {
		res.Topks = append(res.Topks, int64(len(hs)))
		for _, h := range hs {
			res.Scores = append(res.Scores, roundScore(h.score, roundDecimal))
			keys = append(keys, h.r.vals[c.pk])
			rows = append(rows, h.r)
		}
	}
	res.Ids = idsOf(c.fields[c.pk], keys)
	res.FieldsData = columns(c, fields, rows)
	res.AllSearchCount = int64(len(rows))
	return res
}

// HybridSearch runs each sub-search and fuses their results with the rrf
// (score 1/(k+rank), rank from 1) or weighted (sum of weight × normalized
// score) strategy of rank_params.
func (s *Server) HybridSearch(ctx context.Context, req *milvuspb.HybridSearchRequest) (*milvuspb.SearchResults, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	fail := func(err error) (*milvuspb.SearchResults, error) {
		return &milvuspb.SearchResults{Status: merr.Status(err)}, nil
	}
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return fail(err)
	}
	if err := c.requireLoaded(); err != nil {
		return fail(err)
	}
	if len(req.GetRequests()) == 0 {
		return fail(merr.WrapErrParameterInvalidMsg("hybrid search needs at least one request"))
	}
	rank := kv(req.GetRankParams())
	limit, err := strconv.Atoi(rank["limit"])
	if err != nil || limit <= 0 || limit > maxTopK {
		return fail(merr.WrapErrParameterInvalidMsg("limit [%s] is invalid, it should be in range [1, %d]", rank["limit"], maxTopK))
	}
	offset, _ := strconv.Atoi(rank["offset"])
	roundDecimal := -1
	if s := rank["round_decimal"]; s != "" {
		roundDecimal, _ = strconv.Atoi(s)
	}
	strategy := strings.ToLower(rank["strategy"])
	if strategy == "" {
		strategy = "rrf"
	}
	var rp struct {
		K         *float64  `json:"k"`
		Weights   []float64 `json:"weights"`
		NormScore *bool     `json:"norm_score"`
	}
	if p := rank["params"]; p != "" {
		if err := json.Unmarshal([]byte(p), &rp); err != nil {
			return fail(merr.WrapErrParameterInvalidMsg("rank params are not valid JSON: %v", err))
		}
	}
	k := 60.0
	if rp.K != nil {
		k = *rp.K
		if k <= 0 || k >= 16384 {
			return fail(merr.WrapErrParameterInvalidMsg("the k of rrf ranker should be in range (0, 16384), got %v", k))
		}
	}
	switch strategy {
	case "rrf":
	case "weighted":
		if len(rp.Weights) != len(req.GetRequests()) {
			return fail(merr.WrapErrParameterInvalidMsg("the length of weights param mismatch with ann search requests: invalid parameter[expected=%d][actual=%d]",
				len(req.GetRequests()), len(rp.Weights)))
		}
	default:
		return fail(merr.WrapErrParameterInvalidMsg("unsupported rank type %s", strategy))
	}
	norm := rp.NormScore == nil || *rp.NormScore

	var legs []*annSearch
	nq := -1
	for _, sub := range req.GetRequests() {
		as, err := parseSearch(c, sub)
		if err != nil {
			return fail(err)
		}
		if nq >= 0 && len(as.queries) != nq {
			return fail(merr.WrapErrParameterInvalidMsg("the nq of sub-requests differ"))
		}
		nq = len(as.queries)
		legs = append(legs, as)
	}
	fields, names, err := outputFields(c, req.GetOutputFields())
	if err != nil {
		return fail(err)
	}
	per := make([][]hit, nq)
	for qi := range nq {
		fused := make(map[any]*hit)
		for li, as := range legs {
			for rank, h := range as.run(c, as.queries[qi]) {
				key := h.r.vals[c.pk]
				var add float32
				if strategy == "rrf" {
					add = float32(1 / (k + float64(rank+1)))
				} else {
					sc := float64(h.score)
					if norm {
						sc = normalizeScore(as.metric, sc)
					}
					add = float32(rp.Weights[li] * sc)
				}
				if f := fused[key]; f != nil {
					f.score += add
				} else {
					fused[key] = &hit{r: h.r, score: add}
				}
			}
		}
		hs := make([]hit, 0, len(fused))
		for _, h := range fused {
			hs = append(hs, *h)
		}
		slices.SortFunc(hs, func(a, b hit) int {
			if better("IP", a, b) {
				return -1
			}
			if better("IP", b, a) {
				return 1
			}
			return 0
		})
		if offset < len(hs) {
			hs = hs[offset:]
			per[qi] = hs[:min(len(hs), limit)]
		}
	}
	return &milvuspb.SearchResults{Status: ok(), Results: resultData(c, per, limit, roundDecimal, fields, names), CollectionName: c.name}, nil
}

// normalizeScore maps a metric's score into [0, 1], higher better, as
// Milvus's weighted ranker does.
func normalizeScore(metric string, s float64) float64 {
	switch metric {
	case "COSINE":
		return (1 + s) / 2
	case "L2":
		return 1 - 2*math.Atan(s)/math.Pi
	}
	return 0.5 + math.Atan(s)/math.Pi
}

// Query returns the rows matching expr, or count(*).
func (s *Server) Query(ctx context.Context, req *milvuspb.QueryRequest) (*milvuspb.QueryResults, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	fail := func(err error) (*milvuspb.QueryResults, error) {
		return &milvuspb.QueryResults{Status: merr.Status(err)}, nil
	}
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return fail(err)
	}
	if err := c.requireLoaded(); err != nil {
		return fail(err)
	}
	params := kv(req.GetQueryParams())
	limit, offset := -1, 0
	if s := params["limit"]; s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit <= 0 {
			return fail(merr.WrapErrParameterInvalidMsg("limit [%s] is invalid", s))
		}
	}
	if s := params["offset"]; s != "" {
		if offset, err = strconv.Atoi(s); err != nil || offset < 0 {
			return fail(merr.WrapErrParameterInvalidMsg("offset [%s] is invalid", s))
		}
	}
	if limit > 0 && limit+offset > maxTopK {
		return fail(merr.WrapErrParameterInvalidMsg("invalid max query result window, (offset+limit) should be in range [1, %d], but got %d", maxTopK, limit+offset))
	}
	pred, err := compileExpr(c, req.GetExpr(), req.GetExprTemplateValues())
	if err != nil {
		return fail(err)
	}
	isCount := false
	for _, n := range req.GetOutputFields() {
		if strings.EqualFold(strings.ReplaceAll(n, " ", ""), "count(*)") {
			isCount = true
		}
	}
	if isCount {
		if len(req.GetOutputFields()) != 1 {
			return fail(merr.WrapErrParameterInvalidMsg("count entities with pagination or other output fields is not allowed"))
		}
		n := 0
		c.liveRows(func(r *row) bool {
			if pred(r.vals) {
				n++
			}
			return true
		})
		return &milvuspb.QueryResults{
			Status:         ok(),
			CollectionName: c.name,
			OutputFields:   []string{"count(*)"},
			FieldsData: []*schemapb.FieldData{{
				Type:      schemapb.DataType_Int64,
				FieldName: "count(*)",
				Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
					Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: []int64{int64(n)}}},
				}},
			}},
		}, nil
	}
	if strings.TrimSpace(req.GetExpr()) == "" && limit < 0 {
		return fail(merr.WrapErrParameterInvalidMsg("empty expression should be used with limit"))
	}
	pkField := c.fields[c.pk]
	fields, names, err := outputFields(c, append([]string{pkField.GetName()}, req.GetOutputFields()...))
	if err != nil {
		return fail(err)
	}
	// The latest row of each key, in primary key order.
	latest := make(map[any]*row)
	c.liveRows(func(r *row) bool {
		if pred(r.vals) {
			latest[r.vals[c.pk]] = r
		}
		return true
	})
	rows := make([]*row, 0, len(latest))
	for _, r := range latest {
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b *row) int {
		o, _ := compareValues(a.vals[c.pk], b.vals[c.pk])
		return o
	})
	if offset >= len(rows) {
		rows = nil
	} else {
		rows = rows[offset:]
	}
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	return &milvuspb.QueryResults{
		Status:           ok(),
		CollectionName:   c.name,
		OutputFields:     names,
		FieldsData:       columns(c, fields, rows),
		PrimaryFieldName: pkField.GetName(),
	}, nil
}
