package milvustest

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
)

func ok() *commonpb.Status { return merr.Success() }

// Connect answers the handshake client/v2 makes in New.
func (s *Server) Connect(ctx context.Context, _ *milvuspb.ConnectRequest) (*milvuspb.ConnectResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.db(ctx, ""); err != nil {
		return &milvuspb.ConnectResponse{Status: merr.Status(err)}, nil
	}
	return &milvuspb.ConnectResponse{
		Status: ok(),
		ServerInfo: &commonpb.ServerInfo{
			BuildTags:  Version,
			BuildTime:  "milvustest",
			GoVersion:  runtime.Version(),
			DeployMode: "STANDALONE",
			Reserved:   map[string]string{"server": "milvustest"},
		},
		Identifier: s.state.id(),
	}, nil
}

// GetVersion reports Version.
func (s *Server) GetVersion(context.Context, *milvuspb.GetVersionRequest) (*milvuspb.GetVersionResponse, error) {
	return &milvuspb.GetVersionResponse{Status: ok(), Version: Version}, nil
}

// CheckHealth always reports healthy; use SetUnavailable for an outage.
func (s *Server) CheckHealth(context.Context, *milvuspb.CheckHealthRequest) (*milvuspb.CheckHealthResponse, error) {
	return &milvuspb.CheckHealthResponse{Status: ok(), IsHealthy: true}, nil
}

// CreateDatabase adds an empty database.
func (s *Server) CreateDatabase(_ context.Context, req *milvuspb.CreateDatabaseRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := req.GetDbName()
	if err := validName("database", name); err != nil {
		return merr.Status(merr.WrapErrDatabaseNameInvalid(name, err.Error())), nil
	}
	if _, exists := s.state.dbs[name]; exists {
		return merr.Status(merr.WrapErrParameterInvalidMsg("database already exist: %s", name)), nil
	}
	d := s.state.newDatabase(name)
	d.props = req.GetProperties()
	s.state.dbs[name] = d
	return ok(), nil
}

// DropDatabase removes an empty database other than default; a missing one
// is not an error.
func (s *Server) DropDatabase(_ context.Context, req *milvuspb.DropDatabaseRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := req.GetDbName()
	if name == defaultDB {
		return merr.Status(merr.WrapErrParameterInvalidMsg("can not drop default database")), nil
	}
	d := s.state.dbs[name]
	if d == nil {
		return ok(), nil
	}
	if len(d.colls) > 0 {
		return merr.Status(merr.WrapErrParameterInvalidMsg("can not drop database %s: it still has collections", name)), nil
	}
	delete(s.state.dbs, name)
	return ok(), nil
}

// ListDatabases lists the databases by name.
func (s *Server) ListDatabases(context.Context, *milvuspb.ListDatabasesRequest) (*milvuspb.ListDatabasesResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	resp := &milvuspb.ListDatabasesResponse{Status: ok()}
	names := make([]string, 0, len(s.state.dbs))
	for n := range s.state.dbs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := s.state.dbs[n]
		resp.DbNames = append(resp.DbNames, n)
		resp.DbIds = append(resp.DbIds, d.id)
		resp.CreatedTimestamp = append(resp.CreatedTimestamp, d.created)
	}
	return resp, nil
}

// DescribeDatabase describes one database.
func (s *Server) DescribeDatabase(_ context.Context, req *milvuspb.DescribeDatabaseRequest) (*milvuspb.DescribeDatabaseResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d := s.state.dbs[req.GetDbName()]
	if d == nil {
		return &milvuspb.DescribeDatabaseResponse{Status: merr.Status(merr.WrapErrDatabaseNotFound(req.GetDbName()))}, nil
	}
	return &milvuspb.DescribeDatabaseResponse{Status: ok(), DbName: d.name, DbID: d.id, CreatedTimestamp: d.created, Properties: d.props}, nil
}

// CreateCollection creates a collection from a marshalled schema. Creating
// an existing collection again with the same schema succeeds; with another
// schema it fails.
func (s *Server) CreateCollection(ctx context.Context, req *milvuspb.CreateCollectionRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return merr.Status(err), nil
	}
	name := req.GetCollectionName()
	if err := validName("collection", name); err != nil {
		return merr.Status(err), nil
	}
	sch := &schemapb.CollectionSchema{}
	if err := proto.Unmarshal(req.GetSchema(), sch); err != nil {
		return merr.Status(merr.WrapErrParameterInvalidMsg("unmarshal schema: %v", err)), nil
	}
	if err := checkSchema(name, sch); err != nil {
		return merr.Status(err), nil
	}
	if req.GetShardsNum() < 0 || req.GetShardsNum() > 16 {
		return merr.Status(merr.WrapErrParameterInvalidRange(1, 16, int(req.GetShardsNum()), "invalid shards number")), nil
	}
	if existing, found := d.colls[name]; found {
		if sameSchema(existing.schema, sch) {
			return ok(), nil
		}
		return merr.Status(merr.WrapErrParameterInvalidMsg("create duplicate collection with different parameters, collection: %s", name)), nil
	}
	if _, isAlias := d.aliases[name]; isAlias {
		return merr.Status(merr.WrapErrAliasCollectionNameConflict(d.name, name,
			"collection name ["+name+"] conflicts with an existing alias, please choose a unique name")), nil
	}
	sch.DbName = d.name
	c := &collection{
		id:          s.state.id(),
		name:        name,
		db:          d.name,
		schema:      sch,
		fields:      sch.Fields,
		byName:      make(map[string]int),
		dynamic:     -1,
		shards:      max(req.GetShardsNum(), 1),
		consistency: req.GetConsistencyLevel(),
		props:       req.GetProperties(),
		created:     s.state.ts(),
		segment:     s.state.id(),
		byPK:        make(map[any][]*row),
	}
	c.updated = c.created
	for i, f := range sch.Fields {
		c.byName[f.GetName()] = i
		if f.GetIsPrimaryKey() {
			c.pk = i
		}
		if f.GetIsDynamic() {
			c.dynamic = i
		}
	}
	d.colls[name] = c
	return ok(), nil
}

// DescribeCollection describes a collection, found by name or alias.
func (s *Server) DescribeCollection(ctx context.Context, req *milvuspb.DescribeCollectionRequest) (*milvuspb.DescribeCollectionResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return &milvuspb.DescribeCollectionResponse{Status: merr.Status(err)}, nil
	}
	var c *collection
	if req.GetCollectionName() == "" && req.GetCollectionID() != 0 {
		for _, cc := range d.colls {
			if cc.id == req.GetCollectionID() {
				c = cc
			}
		}
		if c == nil {
			err = merr.WrapErrCollectionNotFound(req.GetCollectionID())
		}
	} else {
		c, err = d.lookup(req.GetCollectionName())
	}
	if err != nil {
		return &milvuspb.DescribeCollectionResponse{Status: merr.Status(err)}, nil
	}
	vchans := make([]string, c.shards)
	pchans := make([]string, c.shards)
	for i := range vchans {
		pchans[i] = fmt.Sprintf("by-dev-rootcoord-dml_%d", i)
		vchans[i] = fmt.Sprintf("%s_%dv%d", pchans[i], c.id, i)
	}
	return &milvuspb.DescribeCollectionResponse{
		Status:               ok(),
		Schema:               proto.Clone(c.schema).(*schemapb.CollectionSchema),
		CollectionID:         c.id,
		CollectionName:       c.name,
		DbName:               c.db,
		DbId:                 d.id,
		VirtualChannelNames:  vchans,
		PhysicalChannelNames: pchans,
		CreatedTimestamp:     c.created,
		CreatedUtcTimestamp:  uint64(time.Now().UnixMilli()),
		ShardsNum:            c.shards,
		Aliases:              d.aliasesOf(c.name),
		ConsistencyLevel:     c.consistency,
		Properties:           c.props,
		NumPartitions:        1,
		UpdateTimestamp:      c.updated,
		UpdateTimestampStr:   strconv.FormatUint(c.updated, 10),
	}, nil
}

// HasCollection is the legacy existence check.
func (s *Server) HasCollection(ctx context.Context, req *milvuspb.HasCollectionRequest) (*milvuspb.BoolResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return &milvuspb.BoolResponse{Status: merr.Status(err)}, nil
	}
	_, err = d.lookup(req.GetCollectionName())
	return &milvuspb.BoolResponse{Status: ok(), Value: err == nil}, nil
}

// ShowCollections lists the collections of a database (ListCollections).
func (s *Server) ShowCollections(ctx context.Context, req *milvuspb.ShowCollectionsRequest) (*milvuspb.ShowCollectionsResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return &milvuspb.ShowCollectionsResponse{Status: merr.Status(err)}, nil
	}
	names := make([]string, 0, len(d.colls))
	if len(req.GetCollectionNames()) > 0 {
		for _, n := range req.GetCollectionNames() {
			if _, err := d.lookup(n); err != nil {
				return &milvuspb.ShowCollectionsResponse{Status: merr.Status(err)}, nil
			}
			names = append(names, n)
		}
	} else {
		for n := range d.colls {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	resp := &milvuspb.ShowCollectionsResponse{Status: ok()}
	now := time.Now()
	for _, n := range names {
		c, _ := d.lookup(n)
		st, progress := c.loadState(now)
		if req.GetType() == milvuspb.ShowType_InMemory && st != commonpb.LoadState_LoadStateLoaded {
			continue
		}
		resp.CollectionNames = append(resp.CollectionNames, c.name)
		resp.CollectionIds = append(resp.CollectionIds, c.id)
		resp.CreatedTimestamps = append(resp.CreatedTimestamps, c.created)
		resp.CreatedUtcTimestamps = append(resp.CreatedUtcTimestamps, c.created>>18)
		resp.InMemoryPercentages = append(resp.InMemoryPercentages, progress)
		resp.QueryServiceAvailable = append(resp.QueryServiceAvailable, st == commonpb.LoadState_LoadStateLoaded)
		resp.ShardsNum = append(resp.ShardsNum, c.shards)
	}
	return resp, nil
}

// DropCollection drops a collection. Dropping one that does not exist
// succeeds; dropping through an alias, or one that aliases still point at,
// is refused.
func (s *Server) DropCollection(ctx context.Context, req *milvuspb.DropCollectionRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return merr.Status(err), nil
	}
	name := req.GetCollectionName()
	if _, isAlias := d.aliases[name]; isAlias {
		return merr.Status(merr.WrapErrParameterInvalidMsg("cannot drop the collection via alias = %s", name)), nil
	}
	if _, exists := d.colls[name]; !exists {
		return ok(), nil
	}
	if aliases := d.aliasesOf(name); len(aliases) > 0 {
		return merr.Status(merr.WrapErrParameterInvalidMsg(
			"unable to drop the collection [%s] because it has associated aliases %v, please remove all aliases before dropping the collection",
			name, aliases)), nil
	}
	delete(d.colls, name)
	return ok(), nil
}

// GetCollectionStatistics reports row_count: the rows of flushed segments,
// as Milvus does, so rows inserted since the last Flush are not counted.
func (s *Server) GetCollectionStatistics(ctx context.Context, req *milvuspb.GetCollectionStatisticsRequest) (*milvuspb.GetCollectionStatisticsResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetCollectionStatisticsResponse{Status: merr.Status(err)}, nil
	}
	n := 0
	c.liveRows(func(r *row) bool {
		if r.flushed {
			n++
		}
		return true
	})
	return &milvuspb.GetCollectionStatisticsResponse{
		Status: ok(),
		Stats:  []*commonpb.KeyValuePair{{Key: "row_count", Value: strconv.Itoa(n)}},
	}, nil
}

// CreateAlias points a new alias at a collection. Creating an alias that
// already points at the same collection succeeds.
func (s *Server) CreateAlias(ctx context.Context, req *milvuspb.CreateAliasRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return merr.Status(err), nil
	}
	alias, target := req.GetAlias(), req.GetCollectionName()
	if err := validName("alias", alias); err != nil {
		return merr.Status(err), nil
	}
	if _, isColl := d.colls[alias]; isColl {
		return merr.Status(merr.WrapErrAliasCollectionNameConflict(d.name, alias)), nil
	}
	if _, isAlias := d.aliases[target]; isAlias {
		return merr.Status(merr.WrapErrParameterInvalidMsg("cannot create an alias on an alias: %s", target)), nil
	}
	if _, exists := d.colls[target]; !exists {
		return merr.Status(merr.WrapErrCollectionNotFoundWithDB(d.name, target)), nil
	}
	if cur, exists := d.aliases[alias]; exists {
		if cur == target {
			return ok(), nil
		}
		return merr.Status(merr.WrapErrAliasAlreadyExist(d.name, alias,
			fmt.Sprintf("alias exists and already aliased to another collection, alias: %s, collection: %s, other collection: %s", alias, cur, target))), nil
	}
	d.aliases[alias] = target
	return ok(), nil
}

// AlterAlias moves an existing alias to another collection.
func (s *Server) AlterAlias(ctx context.Context, req *milvuspb.AlterAliasRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return merr.Status(err), nil
	}
	alias, target := req.GetAlias(), req.GetCollectionName()
	if _, exists := d.aliases[alias]; !exists {
		return merr.Status(merr.WrapErrAliasNotFound(d.name, alias)), nil
	}
	if _, isAlias := d.aliases[target]; isAlias {
		return merr.Status(merr.WrapErrParameterInvalidMsg("cannot alter an alias to an alias: %s", target)), nil
	}
	if _, exists := d.colls[target]; !exists {
		return merr.Status(merr.WrapErrCollectionNotFoundWithDB(d.name, target)), nil
	}
	d.aliases[alias] = target
	return ok(), nil
}

// DropAlias removes an alias; a missing one is not an error.
func (s *Server) DropAlias(ctx context.Context, req *milvuspb.DropAliasRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return merr.Status(err), nil
	}
	delete(d.aliases, req.GetAlias())
	return ok(), nil
}

// DescribeAlias names the collection an alias points at.
func (s *Server) DescribeAlias(ctx context.Context, req *milvuspb.DescribeAliasRequest) (*milvuspb.DescribeAliasResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return &milvuspb.DescribeAliasResponse{Status: merr.Status(err)}, nil
	}
	target, exists := d.aliases[req.GetAlias()]
	if !exists {
		return &milvuspb.DescribeAliasResponse{Status: merr.Status(merr.WrapErrAliasNotFound(d.name, req.GetAlias()))}, nil
	}
	return &milvuspb.DescribeAliasResponse{Status: ok(), DbName: d.name, Alias: req.GetAlias(), Collection: target}, nil
}

// ListAliases lists the aliases of one collection, or of the database.
func (s *Server) ListAliases(ctx context.Context, req *milvuspb.ListAliasesRequest) (*milvuspb.ListAliasesResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return &milvuspb.ListAliasesResponse{Status: merr.Status(err)}, nil
	}
	resp := &milvuspb.ListAliasesResponse{Status: ok(), DbName: d.name, CollectionName: req.GetCollectionName()}
	if name := req.GetCollectionName(); name != "" {
		c, err := d.lookup(name)
		if err != nil {
			return &milvuspb.ListAliasesResponse{Status: merr.Status(err)}, nil
		}
		resp.Aliases = d.aliasesOf(c.name)
		return resp, nil
	}
	for a := range d.aliases {
		resp.Aliases = append(resp.Aliases, a)
	}
	sort.Strings(resp.Aliases)
	return resp, nil
}

// Index types the server accepts, by field type.
var (
	sparseIndexTypes = map[string]bool{"SPARSE_INVERTED_INDEX": true, "SPARSE_WAND": true, "AUTOINDEX": true}
	denseIndexTypes  = map[string]bool{"FLAT": true, "IVF_FLAT": true, "IVF_SQ8": true, "IVF_PQ": true, "IVF_RABITQ": true,
		"HNSW": true, "DISKANN": true, "SCANN": true, "AUTOINDEX": true}
	scalarIndexTypes = map[string]bool{"": true, "INVERTED": true, "STL_SORT": true, "Trie": true, "BITMAP": true, "AUTOINDEX": true}
	denseMetrics     = map[string]bool{"L2": true, "IP": true, "COSINE": true}
)

// indexParams flattens CreateIndex's extra params: the legacy "params"
// JSON object is spread into top-level keys, as Milvus does.
func indexParams(pairs []*commonpb.KeyValuePair) (map[string]string, error) {
	out := make(map[string]string)
	for _, p := range pairs {
		if p.GetKey() != "params" {
			out[p.GetKey()] = p.GetValue()
			continue
		}
		var nested map[string]any
		if err := json.Unmarshal([]byte(p.GetValue()), &nested); err != nil {
			return nil, merr.WrapErrParameterInvalidMsg("index params are not valid JSON: %v", err)
		}
		for k, v := range nested {
			out[k] = fmt.Sprint(v)
		}
	}
	return out, nil
}

// CreateIndex builds an index (at once: its state is Finished). Creating
// the same index again succeeds; a different one on an indexed field fails.
func (s *Server) CreateIndex(ctx context.Context, req *milvuspb.CreateIndexRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return merr.Status(err), nil
	}
	f, _, found := c.field(req.GetFieldName())
	if !found || f.GetIsDynamic() {
		return merr.Status(merr.WrapErrFieldNotFound(req.GetFieldName(), "cannot create index on non-exist field: "+req.GetFieldName())), nil
	}
	params, err := indexParams(req.GetExtraParams())
	if err != nil {
		return merr.Status(err), nil
	}
	it := params["index_type"]
	mt := strings.ToUpper(params["metric_type"])
	switch {
	case f.GetDataType() == schemapb.DataType_SparseFloatVector:
		if it == "" {
			it = "AUTOINDEX"
		}
		if !sparseIndexTypes[it] {
			return merr.Status(merr.WrapErrIndexNotSupported(it, "sparse float vector index does not support index type "+it)), nil
		}
		if mt == "" {
			mt = "IP"
		}
		if mt != "IP" {
			return merr.Status(merr.WrapErrParameterInvalidMsg("only IP is the supported metric type for sparse index, got %s", mt)), nil
		}
		if r, has := params["drop_ratio_build"]; has {
			if x, err := strconv.ParseFloat(r, 64); err != nil || x < 0 || x >= 1 {
				return merr.Status(merr.WrapErrParameterInvalidMsg("drop_ratio_build must be in [0, 1), got %s", r)), nil
			}
		}
	case f.GetDataType() == schemapb.DataType_FloatVector:
		if it == "" {
			it = "AUTOINDEX"
		}
		if !denseIndexTypes[it] {
			return merr.Status(merr.WrapErrIndexNotSupported(it)), nil
		}
		if mt == "" {
			mt = "COSINE"
		}
		if !denseMetrics[mt] {
			return merr.Status(merr.WrapErrParameterInvalidMsg("float vector index does not support metric type: %s", mt)), nil
		}
		if it == "HNSW" {
			if m, has := params["M"]; has {
				if x, err := strconv.Atoi(m); err != nil || x < 2 || x > 2048 {
					return merr.Status(merr.WrapErrParameterInvalidMsg("param 'M' (%s) should be in range [2, 2048]", m)), nil
				}
			}
			if e, has := params["efConstruction"]; has {
				if x, err := strconv.Atoi(e); err != nil || x < 1 {
					return merr.Status(merr.WrapErrParameterInvalidMsg("param 'efConstruction' (%s) should be a positive integer", e)), nil
				}
			}
		}
	default:
		if !scalarIndexTypes[it] {
			return merr.Status(merr.WrapErrIndexNotSupported(it)), nil
		}
		if it == "" {
			it = "INVERTED"
		}
		mt = ""
	}
	params["index_type"] = it
	if mt != "" {
		params["metric_type"] = mt
	} else {
		delete(params, "metric_type")
	}
	name := req.GetIndexName()
	if name == "" {
		name = f.GetName()
	}
	if ix := c.indexOn(f.GetName()); ix != nil {
		if ix.name == name && sameParams(ix.params, params) {
			return ok(), nil
		}
		return merr.Status(merr.WrapErrIndexDuplicate(ix.name, "at most one distinct index is allowed per field")), nil
	}
	for _, ix := range c.indexes {
		if ix.name == name {
			return merr.Status(merr.WrapErrIndexDuplicate(name, "index name is already used by field "+ix.field)), nil
		}
	}
	c.indexes = append(c.indexes, &index{name: name, id: s.state.id(), field: f.GetName(), params: params, created: s.state.ts()})
	return ok(), nil
}

func sameParams(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// DescribeIndex lists the indexes of a collection, or the one named or on
// the field given.
func (s *Server) DescribeIndex(ctx context.Context, req *milvuspb.DescribeIndexRequest) (*milvuspb.DescribeIndexResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.DescribeIndexResponse{Status: merr.Status(err)}, nil
	}
	resp := &milvuspb.DescribeIndexResponse{Status: ok()}
	for _, ix := range c.indexes {
		if req.GetIndexName() != "" && ix.name != req.GetIndexName() {
			continue
		}
		if req.GetFieldName() != "" && ix.field != req.GetFieldName() {
			continue
		}
		keys := make([]string, 0, len(ix.params))
		for k := range ix.params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		params := make([]*commonpb.KeyValuePair, 0, len(keys))
		for _, k := range keys {
			params = append(params, &commonpb.KeyValuePair{Key: k, Value: ix.params[k]})
		}
		resp.IndexDescriptions = append(resp.IndexDescriptions, &milvuspb.IndexDescription{
			IndexName:   ix.name,
			IndexID:     ix.id,
			Params:      params,
			FieldName:   ix.field,
			IndexedRows: int64(c.live),
			TotalRows:   int64(c.live),
			State:       commonpb.IndexState_Finished,
		})
	}
	if len(resp.IndexDescriptions) == 0 {
		name := req.GetIndexName()
		if name == "" {
			name = req.GetFieldName()
		}
		return &milvuspb.DescribeIndexResponse{Status: merr.Status(merr.WrapErrIndexNotFoundForCollection(c.name, name))}, nil
	}
	return resp, nil
}

// DropIndex drops an index of a released collection.
func (s *Server) DropIndex(ctx context.Context, req *milvuspb.DropIndexRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return merr.Status(err), nil
	}
	if st, _ := c.loadState(time.Now()); st != commonpb.LoadState_LoadStateNotLoad {
		return merr.Status(merr.WrapErrParameterInvalidMsg("index cannot be dropped, collection is loaded, please release it first")), nil
	}
	kept := c.indexes[:0]
	for _, ix := range c.indexes {
		if (req.GetIndexName() != "" && ix.name == req.GetIndexName()) || (req.GetIndexName() == "" && ix.field == req.GetFieldName()) {
			continue
		}
		kept = append(kept, ix)
	}
	c.indexes = kept
	return ok(), nil
}

// LoadCollection loads a collection whose vector fields are all indexed.
// Loading takes SetLoadDelay's time.
func (s *Server) LoadCollection(ctx context.Context, req *milvuspb.LoadCollectionRequest) (*commonpb.Status, error) {
	s.faultMu.Lock()
	delay := s.loadDelay
	s.faultMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return merr.Status(err), nil
	}
	for _, f := range c.fields {
		if isVector(f.GetDataType()) && c.indexOn(f.GetName()) == nil {
			return merr.Status(merr.WrapErrIndexNotFoundForCollection(c.name,
				fmt.Sprintf("there is no vector index on field: [%s], please create index firstly", f.GetName()))), nil
		}
	}
	if c.phase != notLoaded {
		return ok(), nil
	}
	c.phase, c.loadStart, c.loadDelay = loading, time.Now(), delay
	if delay <= 0 {
		c.phase = loaded
	}
	return ok(), nil
}

// ReleaseCollection releases a collection; searching it fails until it is
// loaded again.
func (s *Server) ReleaseCollection(ctx context.Context, req *milvuspb.ReleaseCollectionRequest) (*commonpb.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return merr.Status(err), nil
	}
	c.phase = notLoaded
	return ok(), nil
}

// GetLoadingProgress reports how far a load is (100 when loaded).
func (s *Server) GetLoadingProgress(ctx context.Context, req *milvuspb.GetLoadingProgressRequest) (*milvuspb.GetLoadingProgressResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetLoadingProgressResponse{Status: merr.Status(err)}, nil
	}
	st, progress := c.loadState(time.Now())
	if st == commonpb.LoadState_LoadStateNotLoad {
		return &milvuspb.GetLoadingProgressResponse{Status: merr.Status(merr.WrapErrCollectionNotLoaded(c.name))}, nil
	}
	return &milvuspb.GetLoadingProgressResponse{Status: ok(), Progress: progress, RefreshProgress: progress}, nil
}

// GetLoadState reports NotLoad, Loading or Loaded.
func (s *Server) GetLoadState(ctx context.Context, req *milvuspb.GetLoadStateRequest) (*milvuspb.GetLoadStateResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.GetLoadStateResponse{Status: merr.Status(err), State: commonpb.LoadState_LoadStateNotExist}, nil
	}
	st, _ := c.loadState(time.Now())
	return &milvuspb.GetLoadStateResponse{Status: ok(), State: st}, nil
}

// Flush seals every row inserted so far (they count in row_count after).
func (s *Server) Flush(ctx context.Context, req *milvuspb.FlushRequest) (*milvuspb.FlushResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.db(ctx, req.GetDbName())
	if err != nil {
		return &milvuspb.FlushResponse{Status: merr.Status(err)}, nil
	}
	resp := &milvuspb.FlushResponse{
		Status:          ok(),
		DbName:          d.name,
		CollSegIDs:      make(map[string]*schemapb.LongArray),
		FlushCollSegIDs: make(map[string]*schemapb.LongArray),
		CollSealTimes:   make(map[string]int64),
		CollFlushTs:     make(map[string]uint64),
	}
	for _, name := range req.GetCollectionNames() {
		c, err := d.lookup(name)
		if err != nil {
			return &milvuspb.FlushResponse{Status: merr.Status(err)}, nil
		}
		for _, r := range c.rows {
			r.flushed = true
		}
		seg := c.segment
		c.segment = s.state.id()
		resp.CollSegIDs[name] = &schemapb.LongArray{Data: []int64{seg}}
		resp.FlushCollSegIDs[name] = &schemapb.LongArray{Data: []int64{seg}}
		resp.CollSealTimes[name] = time.Now().Unix()
		resp.CollFlushTs[name] = s.state.ts()
	}
	return resp, nil
}

// GetFlushState reports a flush as done: flushes complete at once.
func (s *Server) GetFlushState(ctx context.Context, req *milvuspb.GetFlushStateRequest) (*milvuspb.GetFlushStateResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if req.GetCollectionName() != "" {
		if _, err := s.collectionOf(ctx, req.GetDbName(), req.GetCollectionName()); err != nil {
			return &milvuspb.GetFlushStateResponse{Status: merr.Status(err)}, nil
		}
	}
	return &milvuspb.GetFlushStateResponse{Status: ok(), Flushed: req.GetFlushTs() <= s.state.lastTS}, nil
}
