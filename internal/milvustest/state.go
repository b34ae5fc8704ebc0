package milvustest

import (
	"context"
	"sort"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
)

const defaultDB = "default"

// state is everything the server holds, guarded by Server.mu.
type state struct {
	dbs    map[string]*database
	nextID int64
	lastTS uint64
}

func newState() *state {
	st := &state{dbs: make(map[string]*database), nextID: 440000000000000000}
	st.dbs[defaultDB] = st.newDatabase(defaultDB)
	return st
}

// id returns a fresh id for a database, collection, index or segment.
func (st *state) id() int64 {
	st.nextID++
	return st.nextID
}

// ts returns a fresh hybrid timestamp (physical milliseconds << 18 plus a
// logical counter), strictly increasing, as Milvus's TSO hands them out.
func (st *state) ts() uint64 {
	t := uint64(time.Now().UnixMilli()) << 18
	if t <= st.lastTS {
		t = st.lastTS + 1
	}
	st.lastTS = t
	return t
}

type database struct {
	name    string
	id      int64
	created uint64
	props   []*commonpb.KeyValuePair
	colls   map[string]*collection
	aliases map[string]string // alias -> collection name
}

func (st *state) newDatabase(name string) *database {
	return &database{
		name:    name,
		id:      st.id(),
		created: st.ts(),
		colls:   make(map[string]*collection),
		aliases: make(map[string]string),
	}
}

// lookup resolves a collection by name or alias.
func (d *database) lookup(name string) (*collection, error) {
	if d == nil {
		return nil, merr.WrapErrCollectionNotFound(name)
	}
	if c, ok := d.colls[name]; ok {
		return c, nil
	}
	if target, ok := d.aliases[name]; ok {
		if c, ok := d.colls[target]; ok {
			return c, nil
		}
	}
	return nil, merr.WrapErrCollectionNotFoundWithDB(d.name, name)
}

// aliasesOf returns the aliases pointing at collection name, sorted.
func (d *database) aliasesOf(name string) []string {
	var out []string
	for a, c := range d.aliases {
		if c == name {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

// dbName picks the database of a request: its own db_name field, else the
// "dbname" header the client sends for ClientConfig.DBName, else default.
func dbName(ctx context.Context, fromRequest string) string {
	if fromRequest != "" {
		return fromRequest
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("dbname"); len(v) > 0 && v[0] != "" {
			return v[0]
		}
	}
	return defaultDB
}

// db resolves the database of a request; the caller holds s.mu.
func (s *Server) db(ctx context.Context, fromRequest string) (*database, error) {
	name := dbName(ctx, fromRequest)
	d := s.state.dbs[name]
	if d == nil {
		return nil, merr.WrapErrDatabaseNotFound(name)
	}
	return d, nil
}

// collectionOf resolves the database and collection (or alias) of a
// request; the caller holds s.mu.
func (s *Server) collectionOf(ctx context.Context, db, name string) (*collection, error) {
	d, err := s.db(ctx, db)
	if err != nil {
		return nil, err
	}
	return d.lookup(name)
}

// row is one inserted entity. vals holds one value per schema field, in
// schema order (see value types in data.go).
type row struct {
	seq     int64
	vals    []any
	deleted bool
	flushed bool
}

type loadPhase int

const (
	notLoaded loadPhase = iota
	loading
	loaded
)

type index struct {
	name    string
	id      int64
	field   string
	params  map[string]string // flattened: index_type, metric_type, M, ...
	created uint64
}

func (ix *index) indexType() string  { return ix.params["index_type"] }
func (ix *index) metricType() string { return ix.params["metric_type"] }

type collection struct {
	id          int64
	name        string
	db          string
	schema      *schemapb.CollectionSchema
	fields      []*schemapb.FieldSchema
	byName      map[string]int
	pk          int
	dynamic     int // position of the dynamic $meta field, -1 without one
	shards      int32
	consistency commonpb.ConsistencyLevel
	props       []*commonpb.KeyValuePair
	created     uint64
	updated     uint64
	segment     int64

	rows []*row
	byPK map[any][]*row
	live int
	dead int
	seq  int64

	indexes []*index

	phase     loadPhase
	loadStart time.Time
	loadDelay time.Duration
}

func (c *collection) field(name string) (*schemapb.FieldSchema, int, bool) {
	i, ok := c.byName[name]
	if !ok {
		return nil, -1, false
	}
	return c.fields[i], i, true
}

func (c *collection) indexOn(field string) *index {
	for _, ix := range c.indexes {
		if ix.field == field {
			return ix
		}
	}
	return nil
}

// loadState reports the load state and progress (0-100) at now; a load
// in progress is complete once its delay has passed.
func (c *collection) loadState(now time.Time) (commonpb.LoadState, int64) {
	switch c.phase {
	case loaded:
		return commonpb.LoadState_LoadStateLoaded, 100
	case loading:
		el := now.Sub(c.loadStart)
		if el >= c.loadDelay {
			return commonpb.LoadState_LoadStateLoaded, 100
		}
		return commonpb.LoadState_LoadStateLoading, int64(100 * el / c.loadDelay)
	}
	return commonpb.LoadState_LoadStateNotLoad, 0
}

// requireLoaded fails as Milvus does when a collection that is not (fully)
// loaded is searched or queried.
func (c *collection) requireLoaded() error {
	switch st, _ := c.loadState(time.Now()); st {
	case commonpb.LoadState_LoadStateLoaded:
		return nil
	case commonpb.LoadState_LoadStateLoading:
		return merr.WrapErrCollectionNotFullyLoaded(c.name)
	}
	return merr.WrapErrCollectionNotLoaded(c.name)
}

// add appends r as a live row.
func (c *collection) add(r *row) {
	c.seq++
	r.seq = c.seq
	c.rows = append(c.rows, r)
	key := r.vals[c.pk]
	c.byPK[key] = append(c.byPK[key], r)
	c.live++
}

// remove deletes every live row with primary key key and returns how many.
func (c *collection) remove(key any) int {
	rs := c.byPK[key]
	for _, r := range rs {
		r.deleted = true
	}
	delete(c.byPK, key)
	c.live -= len(rs)
	c.dead += len(rs)
	c.compact()
	return len(rs)
}

// compact drops deleted rows once they outnumber the live ones.
func (c *collection) compact() {
	if c.dead < 1024 || c.dead < c.live {
		return
	}
	kept := make([]*row, 0, c.live)
	for _, r := range c.rows {
		if !r.deleted {
			kept = append(kept, r)
		}
	}
	c.rows = kept
	c.dead = 0
}

// liveRows calls fn for every live row in insertion order until fn
// returns false.
func (c *collection) liveRows(fn func(*row) bool) {
	for _, r := range c.rows {
		if !r.deleted && !fn(r) {
			return
		}
	}
}
