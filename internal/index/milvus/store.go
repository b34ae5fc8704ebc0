// Package milvus keeps the children of a corpus revision in a Milvus
// collection through the official Go client (client/v2). A Store is one
// physical collection: Create makes it, Insert fills it in batches, Finish
// flushes, indexes, loads and verifies it, Search and SearchHybrid query
// it, and SetAlias/Drop take part in promotion and garbage collection.
//
// The collection schema is
//
//	id         VarChar(64), primary key, not auto-generated
//	parent_id  VarChar(256)
//	doc_id     VarChar(1024)
//	ordinal    Int64
//	text       VarChar(65535)
//	sparse     SparseFloatVector  (SPARSE_INVERTED_INDEX, IP)
//	dense      FloatVector(Dense) (HNSW or AUTOINDEX; only when Dense > 0)
//	metadata   JSON               (string to string)
//
// Text and Metadata come from index.Record's payload.
//
// Search keeps the index contract: at most TopK hits by descending
// score, ties by ascending id, whatever order Milvus returns ties in, and
// sparse scores are the exact inner products the embedded store computes.
package milvus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus/client/v2/entity"
	milvusindex "github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"

	"github.com/parentrag/parentrag/internal/index"
)

// Field names of the collection schema.
const (
	FieldID       = "id"
	FieldParentID = "parent_id"
	FieldDocID    = "doc_id"
	FieldOrdinal  = "ordinal"
	FieldText     = "text"
	FieldSparse   = "sparse"
	FieldDense    = "dense"
	FieldMetadata = "metadata"
)

// Store is one Milvus child collection. It is safe for concurrent use.
type Store struct {
	cfg settings
	cli *milvusclient.Client
}

var (
	_ index.Searcher = (*Store)(nil)
	_ index.Writer   = (*Store)(nil)
)

// Open validates cfg and connects to Milvus. A Database that does not
// exist yet is created. Open does not touch the collection: call Create to
// make it, or use an existing one. An unreachable Milvus fails after
// Config.DialTimeout with ErrUnavailable.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	set, err := cfg.settings()
	if err != nil {
		return nil, fmt.Errorf("open milvus store: %w", err)
	}
	s := &Store{cfg: set}
	db := set.Database
	if db == "" {
		db = "default"
	}
	err = s.retry(ctx, func(ctx context.Context, _ int) error {
		cli, err := s.dial(ctx, db)
		if errors.Is(err, merr.ErrDatabaseNotFound) {
			cli, err = s.createDatabase(ctx, db)
		}
		if err != nil {
			return err
		}
		s.cli = cli
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open milvus store at %s: %w", set.Address, err)
	}
	return s, nil
}

func (s *Store) dial(ctx context.Context, db string) (*milvusclient.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	cli, err := milvusclient.New(dctx, &milvusclient.ClientConfig{
		Address:       s.cfg.Address,
		Username:      s.cfg.Username,
		Password:      s.cfg.Password,
		APIKey:        s.cfg.Token,
		DBName:        db,
		EnableTLSAuth: s.cfg.TLS,
	})
	if err != nil && ctx.Err() == nil && dctx.Err() != nil {
		// The dial itself timed out: Milvus is not reachable (yet).
		return nil, fmt.Errorf("dial timed out after %s: %w: %w", s.cfg.DialTimeout, ErrUnavailable, err)
	}
	return cli, err
}

// createDatabase connects to the default database, creates db and
// reconnects to it.
func (s *Store) createDatabase(ctx context.Context, db string) (*milvusclient.Client, error) {
	cli, err := s.dial(ctx, "default")
	if err != nil {
		return nil, err
	}
	defer cli.Close(ctx)
	err = cli.CreateDatabase(ctx, milvusclient.NewCreateDatabaseOption(db))
	if err != nil && !strings.Contains(err.Error(), "already exist") {
		return nil, fmt.Errorf("create database %s: %w", db, err)
	}
	return s.dial(ctx, db)
}

// Close closes the connection.
func (s *Store) Close(ctx context.Context) error {
	if err := s.cli.Close(ctx); err != nil {
		return fmt.Errorf("close milvus store: %w", err)
	}
	return nil
}

// Name is the physical collection name.
func (s *Store) Name() string { return s.cfg.Collection }

// Config returns the configuration with defaults applied.
func (s *Store) Config() Config { return s.cfg.Config }

// Client is the underlying Milvus client, for operations this package does
// not wrap.
func (s *Store) Client() *milvusclient.Client { return s.cli }

// schema is the collection schema for the configuration.
func (s *Store) schema() *entity.Schema {
	sch := entity.NewSchema().WithName(s.cfg.Collection).WithAutoID(false).
		WithDescription("parentrag children").
		WithField(entity.NewField().WithName(FieldID).WithDataType(entity.FieldTypeVarChar).
			WithIsPrimaryKey(true).WithIsAutoID(false).WithMaxLength(MaxIDLength)).
		WithField(entity.NewField().WithName(FieldParentID).WithDataType(entity.FieldTypeVarChar).WithMaxLength(MaxParentIDLength)).
		WithField(entity.NewField().WithName(FieldDocID).WithDataType(entity.FieldTypeVarChar).WithMaxLength(MaxDocIDLength)).
		WithField(entity.NewField().WithName(FieldOrdinal).WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName(FieldText).WithDataType(entity.FieldTypeVarChar).WithMaxLength(MaxTextLength)).
		WithField(entity.NewField().WithName(FieldSparse).WithDataType(entity.FieldTypeSparseVector))
	if s.cfg.Dense > 0 {
		sch.WithField(entity.NewField().WithName(FieldDense).WithDataType(entity.FieldTypeFloatVector).WithDim(int64(s.cfg.Dense)))
	}
	return sch.WithField(entity.NewField().WithName(FieldMetadata).WithDataType(entity.FieldTypeJSON))
}

// Create creates the collection. It is idempotent: an existing collection
// with the same schema is accepted, one with another schema fails with
// ErrSchemaMismatch. Indexes are built by Finish, after the inserts.
func (s *Store) Create(ctx context.Context) error {
	name := s.cfg.Collection
	err := s.retry(ctx, func(ctx context.Context, _ int) error {
		coll, err := s.cli.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(name))
		switch {
		case err == nil:
			if coll.Name != name {
				return fmt.Errorf("%s is an alias of collection %s: %w", name, coll.Name, ErrSchemaMismatch)
			}
			return s.sameSchema(coll.Schema)
		case !errors.Is(err, merr.ErrCollectionNotFound):
			return err
		}
		opt := milvusclient.NewCreateCollectionOption(name, s.schema()).
			WithShardNum(int32(s.cfg.Shards)).
			WithConsistencyLevel(s.cfg.consistency)
		return s.cli.CreateCollection(ctx, opt)
	})
	if err != nil {
		return fmt.Errorf("create collection %s: %w", name, err)
	}
	return nil
}

// sameSchema compares an existing schema with the configured one.
func (s *Store) sameSchema(got *entity.Schema) error {
	want := s.schema()
	if len(got.Fields) != len(want.Fields) {
		return fmt.Errorf("existing collection has %d fields, want %d: %w", len(got.Fields), len(want.Fields), ErrSchemaMismatch)
	}
	for i, w := range want.Fields {
		g := got.Fields[i]
		switch {
		case g.Name != w.Name:
			return fmt.Errorf("field %d is %s, want %s: %w", i, g.Name, w.Name, ErrSchemaMismatch)
		case g.DataType != w.DataType:
			return fmt.Errorf("field %s has type %s, want %s: %w", w.Name, g.DataType.Name(), w.DataType.Name(), ErrSchemaMismatch)
		case g.PrimaryKey != w.PrimaryKey || g.AutoID != w.AutoID:
			return fmt.Errorf("field %s primary key or auto id differs: %w", w.Name, ErrSchemaMismatch)
		}
		for _, p := range []string{entity.TypeParamDim, entity.TypeParamMaxLength} {
			if g.TypeParams[p] != w.TypeParams[p] {
				return fmt.Errorf("field %s has %s %q, want %q: %w", w.Name, p, g.TypeParams[p], w.TypeParams[p], ErrSchemaMismatch)
			}
		}
	}
	return nil
}

// Exists reports whether the collection exists.
func (s *Store) Exists(ctx context.Context) (bool, error) {
	var has bool
	err := s.retry(ctx, func(ctx context.Context, _ int) error {
		var err error
		has, err = s.cli.HasCollection(ctx, milvusclient.NewHasCollectionOption(s.cfg.Collection))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("check collection %s: %w", s.cfg.Collection, err)
	}
	return has, nil
}

// indexes returns the index to build on each vector field.
func (s *Store) indexes() map[string]milvusindex.Index {
	out := map[string]milvusindex.Index{
		// drop_ratio_build 0 keeps every weight: sparse search stays exact.
		FieldSparse: milvusindex.NewSparseInvertedIndex(entity.IP, 0),
	}
	if s.cfg.Dense > 0 {
		metric := entity.MetricType(s.cfg.metric.String())
		if s.cfg.Index == IndexHNSW {
			out[FieldDense] = milvusindex.NewHNSWIndex(metric, s.cfg.HNSWM, s.cfg.HNSWEfConstruction)
		} else {
			out[FieldDense] = milvusindex.NewAutoIndex(metric)
		}
	}
	return out
}

// Finish makes an inserted collection searchable and verifies it: flush,
// build the indexes, load, wait until loaded, and check that it holds
// exactly want rows (ErrRowCount otherwise). Every step is idempotent, so
// Finish can be called again after a failure.
func (s *Store) Finish(ctx context.Context, want int) error {
	name := s.cfg.Collection
	err := s.retry(ctx, func(ctx context.Context, _ int) error {
		task, err := s.cli.Flush(ctx, milvusclient.NewFlushOption(name))
		if err != nil {
			return err
		}
		return task.Await(ctx)
	})
	if err != nil {
		return fmt.Errorf("finish collection %s: flush: %w", name, err)
	}
	for _, field := range []string{FieldSparse, FieldDense} {
		idx, ok := s.indexes()[field]
		if !ok {
			continue
		}
		if err := s.ensureIndex(ctx, field, idx); err != nil {
			return fmt.Errorf("finish collection %s: index %s: %w", name, field, err)
		}
	}
	err = s.retry(ctx, func(ctx context.Context, _ int) error {
		task, err := s.cli.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(name))
		if err != nil {
			return err
		}
		return task.Await(ctx)
	})
	if err != nil {
		return fmt.Errorf("finish collection %s: load: %w", name, err)
	}
	got, err := s.Count(ctx)
	if err != nil {
		return fmt.Errorf("finish collection %s: %w", name, err)
	}
	if got != want {
		return fmt.Errorf("finish collection %s: it holds %d rows, want %d: %w", name, got, want, ErrRowCount)
	}
	return nil
}

// ensureIndex builds idx on field unless the same index is there already;
// a different one is ErrSchemaMismatch.
func (s *Store) ensureIndex(ctx context.Context, field string, idx milvusindex.Index) error {
	name := s.cfg.Collection
	return s.retry(ctx, func(ctx context.Context, _ int) error {
		desc, err := s.cli.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(name, field))
		switch {
		case err == nil:
			have, want := desc.Params(), idx.Params()
			for _, k := range []string{milvusindex.IndexTypeKey, milvusindex.MetricTypeKey} {
				if !strings.EqualFold(have[k], want[k]) {
					return fmt.Errorf("existing index has %s %s, want %s: %w", k, have[k], want[k], ErrSchemaMismatch)
				}
			}
			if desc.State == indexFinished {
				return nil
			}
		case errors.Is(err, merr.ErrIndexNotFound):
			if _, err := s.cli.CreateIndex(ctx, milvusclient.NewCreateIndexOption(name, field, idx).WithIndexName(field)); err != nil {
				return err
			}
		default:
			return err
		}
		return awaitIndex(ctx, s.cli, name, field)
	})
}

// Index states of DescribeIndex.
const (
	indexFinished = milvusindex.IndexState(commonpb.IndexState_Finished)
	indexFailed   = milvusindex.IndexState(commonpb.IndexState_Failed)
)

// awaitIndex waits until the index named field is built.
func awaitIndex(ctx context.Context, cli *milvusclient.Client, coll, field string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		desc, err := cli.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, field))
		if err != nil {
			return err
		}
		switch desc.State {
		case indexFinished:
			return nil
		case indexFailed:
			return fmt.Errorf("index build failed")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Count returns the number of rows, read with Strong consistency.
func (s *Store) Count(ctx context.Context) (int, error) {
	var n int64
	err := s.retry(ctx, func(ctx context.Context, _ int) error {
		rs, err := s.cli.Query(ctx, milvusclient.NewQueryOption(s.cfg.Collection).
			WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		if err != nil {
			return err
		}
		col := rs.GetColumn("count(*)")
		if col == nil {
			return fmt.Errorf("count(*) missing from the query result")
		}
		n, err = col.GetAsInt64(0)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count collection %s: %w", s.cfg.Collection, notFound(err))
	}
	return int(n), nil
}

// notFound adds ErrNotFound to a collection-not-found error.
func notFound(err error) error {
	if errors.Is(err, merr.ErrCollectionNotFound) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

// SetAlias points alias at this collection, creating it or moving it from
// another collection.
func (s *Store) SetAlias(ctx context.Context, alias string) error {
	if err := checkName(alias); err != nil {
		return fmt.Errorf("set alias: %w: %w", err, ErrInvalidConfig)
	}
	name := s.cfg.Collection
	err := s.retry(ctx, func(ctx context.Context, _ int) error {
		a, err := s.cli.DescribeAlias(ctx, milvusclient.NewDescribeAliasOption(alias))
		switch {
		case err == nil && a.CollectionName == name:
			return nil
		case err == nil:
			return s.cli.AlterAlias(ctx, milvusclient.NewAlterAliasOption(alias, name))
		case errors.Is(err, merr.ErrAliasNotFound):
			return s.cli.CreateAlias(ctx, milvusclient.NewCreateAliasOption(name, alias))
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("point alias %s at %s: %w", alias, name, notFound(err))
	}
	return nil
}

// DropAlias drops alias if it points at this collection. An alias that is
// missing, or points at another collection, is left alone.
func (s *Store) DropAlias(ctx context.Context, alias string) error {
	name := s.cfg.Collection
	err := s.retry(ctx, func(ctx context.Context, _ int) error {
		a, err := s.cli.DescribeAlias(ctx, milvusclient.NewDescribeAliasOption(alias))
		switch {
		case errors.Is(err, merr.ErrAliasNotFound):
			return nil
		case err != nil:
			return err
		case a.CollectionName != name:
			return nil
		}
		return s.cli.DropAlias(ctx, milvusclient.NewDropAliasOption(alias))
	})
	if err != nil {
		return fmt.Errorf("drop alias %s of %s: %w", alias, name, err)
	}
	return nil
}

// Aliases lists the aliases pointing at this collection.
func (s *Store) Aliases(ctx context.Context) ([]string, error) {
	var out []string
	err := s.retry(ctx, func(ctx context.Context, _ int) error {
		var err error
		out, err = s.cli.ListAliases(ctx, milvusclient.NewListAliasesOption(s.cfg.Collection))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list aliases of %s: %w", s.cfg.Collection, notFound(err))
	}
	return out, nil
}

// Drop drops the collection. It refuses (ErrAliased) while an alias points
// at it, so the serving revision is never dropped; move the alias first.
// Dropping a collection that does not exist succeeds.
func (s *Store) Drop(ctx context.Context) error {
	name := s.cfg.Collection
	err := s.retry(ctx, func(ctx context.Context, _ int) error {
		aliases, err := s.cli.ListAliases(ctx, milvusclient.NewListAliasesOption(name))
		switch {
		case errors.Is(err, merr.ErrCollectionNotFound):
			return nil
		case err != nil:
			return err
		case len(aliases) > 0:
			return fmt.Errorf("aliases %s point at it: %w", strings.Join(aliases, ", "), ErrAliased)
		}
		return s.cli.DropCollection(ctx, milvusclient.NewDropCollectionOption(name))
	})
	if err != nil {
		return fmt.Errorf("drop collection %s: %w", name, err)
	}
	return nil
}

// String describes the store for logs.
func (s *Store) String() string {
	db := s.cfg.Database
	if db == "" {
		db = "default"
	}
	return "milvus://" + s.cfg.Address + "/" + db + "/" + s.cfg.Collection + "?dense=" + strconv.Itoa(s.cfg.Dense)
}
