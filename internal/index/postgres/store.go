// Package postgres keeps the children of a corpus revision in a
// PostgreSQL table with pgvector, through pgx. A Store is one table:
// Create makes it, Insert fills it in batches, Finish indexes, analyses and
// verifies it, Search queries it, and SetView/Drop take part in promotion
// and garbage collection, as the Milvus store's collections do.
//
// The table of a revision is
//
//	id         text COLLATE "C" PRIMARY KEY
//	parent_id  text NOT NULL
//	doc_id     text NOT NULL
//	ordinal    integer NOT NULL
//	text       text NOT NULL
//	terms      integer[] NOT NULL   GIN index: the children sharing a term
//	sparse     sparsevec(1e9)       the BM25 vector; NULL without one
//	dense      vector(Dense)        HNSW index; only when Dense > 0
//	metadata   jsonb NOT NULL       the parent's metadata, string to string
//
// A sparse search is exact: the GIN index of terms finds every child that
// shares a term with the query, and each is scored by the sparsevec inner
// product, the same float32 sum in the same order of terms as the embedded
// store, so the hits, their order and their ties (by id, byte order) are
// the embedded store's. A dense search walks the HNSW index (approximate,
// as in Milvus). A view named after the corpus selects from the serving
// revision's table, for readers outside parentrag; Drop refuses a table a
// view reads.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parentrag/parentrag/internal/index"
)

// Store is one revision's child table. It is safe for concurrent use.
type Store struct {
	cfg  settings
	pool *pgxpool.Pool
}

var (
	_ index.Searcher = (*Store)(nil)
	_ index.Writer   = (*Store)(nil)
)

// Open validates cfg, connects (a pool of at most MaxConns connections)
// and makes sure the vector extension and the schema exist. It does not
// touch the table: call Create to make it.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	set, err := cfg.settings()
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	pc, err := pgxpool.ParseConfig(set.DSN)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: connection string: %w: %w", redact(err), ErrInvalidConfig)
	}
	pc.MaxConns = int32(set.MaxConns)
	if pc.ConnConfig.ConnectTimeout == 0 {
		pc.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	if len(set.RootCAs) > 0 {
		if err := useRootCAs(&pc.ConnConfig.Config, set.RootCAs); err != nil {
			return nil, fmt.Errorf("open postgres store: %w", err)
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	s := &Store{cfg: set, pool: pool}
	if err := s.prepare(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store at %s: %w", s.where(), err)
	}
	return s, nil
}

// redact keeps a DSN's password out of a parse error: pgx's message may
// quote the string.
func redact(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return fmt.Errorf("cannot parse the connection string (not repeated here: it may hold a password)")
	}
	return err
}

// bound limits one statement to the configured timeout.
func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.Timeout)
}

// prepare creates the vector extension and the schema when missing.
func (s *Store) prepare(ctx context.Context) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var has bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')`).Scan(&has); err != nil {
		return err
	}
	if !has {
		if _, err := s.pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
			return fmt.Errorf("the vector extension (pgvector) is not installed and cannot be created: %w", err)
		}
	}
	if _, err := s.pool.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+ident(s.cfg.Schema)); err != nil {
		return fmt.Errorf("create schema %s: %w", s.cfg.Schema, err)
	}
	return nil
}

// where names the database for messages, without credentials.
func (s *Store) where() string {
	c := s.pool.Config().ConnConfig
	return c.Host + ":" + strconv.Itoa(int(c.Port)) + "/" + c.Database
}

// Close releases the pool.
func (s *Store) Close() { s.pool.Close() }

// Name is the table's name.
func (s *Store) Name() string { return s.cfg.Table }

// Config returns the configuration with defaults applied.
func (s *Store) Config() Config { return s.cfg.Config }

// Pool is the connection pool, for what this package does not wrap.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// String describes the store for logs.
func (s *Store) String() string {
	return "postgres://" + s.where() + "/" + s.cfg.Schema + "." + s.cfg.Table + "?dense=" + strconv.Itoa(s.cfg.Dense)
}

// columns is the table's shape, as information_schema reports it.
func (s *Store) columns() [][2]string {
	cols := [][2]string{
		{"id", "text"}, {"parent_id", "text"}, {"doc_id", "text"}, {"ordinal", "integer"},
		{"text", "text"}, {"terms", "ARRAY"}, {"sparse", "USER-DEFINED"},
	}
	if s.cfg.Dense > 0 {
		cols = append(cols, [2]string{"dense", "USER-DEFINED"})
	}
	return append(cols, [2]string{"metadata", "jsonb"})
}

// createSQL is the table's definition.
func (s *Store) createSQL() string {
	dense := ""
	if s.cfg.Dense > 0 {
		dense = "dense vector(" + strconv.Itoa(s.cfg.Dense) + "),\n"
	}
	return `CREATE TABLE IF NOT EXISTS ` + s.cfg.qualified(s.cfg.Table) + ` (
id text COLLATE "C" PRIMARY KEY,
parent_id text NOT NULL,
doc_id text NOT NULL,
ordinal integer NOT NULL,
text text NOT NULL,
terms integer[] NOT NULL,
sparse sparsevec(` + strconv.Itoa(SparseDim) + `),
` + dense + `metadata jsonb NOT NULL)`
}

// Create creates the table. It is idempotent: an existing table of the
// same shape (left by an interrupted build) is accepted, one of another
// shape fails with ErrSchemaMismatch. Indexes are built by Finish.
func (s *Store) Create(ctx context.Context) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	got, err := s.describe(ctx)
	if err != nil {
		return fmt.Errorf("create table %s: %w", s.cfg.Table, err)
	}
	if got != nil {
		return s.sameShape(got)
	}
	if _, err := s.pool.Exec(ctx, s.createSQL()); err != nil {
		return fmt.Errorf("create table %s: %w", s.cfg.Table, err)
	}
	return nil
}

// describe returns the columns of the table as (name, type, dimension) in
// order, nil when it does not exist.
func (s *Store) describe(ctx context.Context) ([][3]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT a.attname, c.data_type, a.atttypmod
FROM pg_attribute a
JOIN pg_class t ON t.oid = a.attrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
JOIN information_schema.columns c ON c.table_schema = n.nspname AND c.table_name = t.relname AND c.column_name = a.attname
WHERE n.nspname = $1 AND t.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`, s.cfg.Schema, s.cfg.Table)
	if err != nil {
		return nil, err
	}
	var out [][3]string
	for rows.Next() {
		var name, typ string
		var mod int
		if err := rows.Scan(&name, &typ, &mod); err != nil {
			return nil, err
		}
		out = append(out, [3]string{name, typ, strconv.Itoa(mod)})
	}
	return out, rows.Err()
}

// sameShape compares an existing table's columns with the configured ones.
func (s *Store) sameShape(got [][3]string) error {
	want := s.columns()
	if len(got) != len(want) {
		return fmt.Errorf("table %s has %d columns, want %d: %w", s.cfg.Table, len(got), len(want), ErrSchemaMismatch)
	}
	for i, w := range want {
		if got[i][0] != w[0] || got[i][1] != w[1] {
			return fmt.Errorf("table %s: column %d is %s %s, want %s %s: %w", s.cfg.Table, i+1, got[i][0], got[i][1], w[0], w[1], ErrSchemaMismatch)
		}
		if w[0] == "dense" && got[i][2] != strconv.Itoa(s.cfg.Dense) {
			return fmt.Errorf("table %s: dense has %s dimensions, want %d: %w", s.cfg.Table, got[i][2], s.cfg.Dense, ErrSchemaMismatch)
		}
	}
	return nil
}

// Exists reports whether the table exists.
func (s *Store) Exists(ctx context.Context) (bool, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	cols, err := s.describe(ctx)
	if err != nil {
		return false, fmt.Errorf("check table %s: %w", s.cfg.Table, err)
	}
	return cols != nil, nil
}

// indexSQL lists the statements that build the table's indexes.
func (s *Store) indexSQL() []string {
	t := s.cfg.qualified(s.cfg.Table)
	out := []string{`CREATE INDEX IF NOT EXISTS ` + ident(TableName(s.cfg.Table, "terms")) + ` ON ` + t + ` USING gin (terms)`}
	if s.cfg.Dense > 0 {
		out = append(out, `CREATE INDEX IF NOT EXISTS `+ident(TableName(s.cfg.Table, "dense"))+` ON `+t+
			` USING hnsw (dense `+opClass(s.cfg.metric)+`) WITH (m = `+strconv.Itoa(s.cfg.HNSWM)+
			`, ef_construction = `+strconv.Itoa(s.cfg.HNSWEfConstruction)+`)`)
	}
	return out
}

// opClass is pgvector's operator class of a metric.
func opClass(m index.Metric) string {
	switch m {
	case index.IP:
		return "vector_ip_ops"
	case index.L2:
		return "vector_l2_ops"
	}
	return "vector_cosine_ops"
}

// Finish makes a filled table searchable and verifies it: builds its
// indexes, analyses it, and checks that it holds exactly want rows
// (ErrRowCount otherwise). Every step is idempotent.
func (s *Store) Finish(ctx context.Context, want int) error {
	build, cancel := context.WithTimeout(ctx, s.cfg.BuildTimeout)
	defer cancel()
	for _, stmt := range s.indexSQL() {
		if _, err := s.pool.Exec(build, stmt); err != nil {
			return fmt.Errorf("finish table %s: %w", s.cfg.Table, err)
		}
	}
	if _, err := s.pool.Exec(build, `ANALYZE `+s.cfg.qualified(s.cfg.Table)); err != nil {
		return fmt.Errorf("finish table %s: analyze: %w", s.cfg.Table, err)
	}
	got, err := s.Count(ctx)
	if err != nil {
		return fmt.Errorf("finish table %s: %w", s.cfg.Table, err)
	}
	if got != want {
		return fmt.Errorf("finish table %s: it holds %d rows, want %d: %w", s.cfg.Table, got, want, ErrRowCount)
	}
	return nil
}

// Count returns the number of rows.
func (s *Store) Count(ctx context.Context) (int, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+s.cfg.qualified(s.cfg.Table)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count table %s: %w", s.cfg.Table, notFound(err))
	}
	return int(n), nil
}

// notFound adds ErrNotFound to an undefined-table error.
func notFound(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

// SetView points the view name at this table: readers of
// schema.name see the serving revision's children.
func (s *Store) SetView(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("set view: %w: %w", err, ErrInvalidConfig)
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	// A view of the same columns replaces the old one in place: readers
	// never see it missing.
	_, err := s.pool.Exec(ctx, `CREATE OR REPLACE VIEW `+s.cfg.qualified(name)+` AS SELECT * FROM `+s.cfg.qualified(s.cfg.Table))
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P16" { // another revision had other columns
			err = s.replaceView(ctx, name)
		}
	}
	if err != nil {
		return fmt.Errorf("point view %s at %s: %w", name, s.cfg.Table, notFound(err))
	}
	return nil
}

// replaceView drops and creates the view in one transaction, for a table
// whose columns differ from the old one's (another dense dimension).
func (s *Store) replaceView(ctx context.Context, name string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DROP VIEW IF EXISTS `+s.cfg.qualified(name)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE VIEW `+s.cfg.qualified(name)+` AS SELECT * FROM `+s.cfg.qualified(s.cfg.Table))
		return err
	})
}

// Views lists the views that read this table.
func (s *Store) Views(ctx context.Context) ([]string, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT v.relname
FROM pg_depend d
JOIN pg_rewrite r ON r.oid = d.objid
JOIN pg_class v ON v.oid = r.ev_class
JOIN pg_class t ON t.oid = d.refobjid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = $1 AND t.relname = $2 AND v.oid <> t.oid AND v.relkind = 'v'
ORDER BY 1`, s.cfg.Schema, s.cfg.Table)
	if err != nil {
		return nil, fmt.Errorf("list views of %s: %w", s.cfg.Table, err)
	}
	views, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list views of %s: %w", s.cfg.Table, err)
	}
	return views, nil
}

// DropView drops the view name if it reads this table; a view that is
// missing, or reads another table, is left alone.
func (s *Store) DropView(ctx context.Context, name string) error {
	views, err := s.Views(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	for _, v := range views {
		if v == name {
			if _, err := s.pool.Exec(ctx, `DROP VIEW IF EXISTS `+s.cfg.qualified(name)); err != nil {
				return fmt.Errorf("drop view %s: %w", name, err)
			}
		}
	}
	return nil
}

// Drop drops the table. It refuses (ErrViewed) while a view reads it, so
// the serving revision is never dropped: move the view first. Dropping a
// table that does not exist succeeds.
func (s *Store) Drop(ctx context.Context) error {
	views, err := s.Views(ctx)
	if err != nil {
		return err
	}
	if len(views) > 0 {
		return fmt.Errorf("drop table %s: views %v read it: %w", s.cfg.Table, views, ErrViewed)
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DROP TABLE IF EXISTS `+s.cfg.qualified(s.cfg.Table)); err != nil {
		return fmt.Errorf("drop table %s: %w", s.cfg.Table, err)
	}
	return nil
}
