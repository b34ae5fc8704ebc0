package postgres

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/postgres/pgname"
)

// Defaults applied to zero Config fields.
const (
	DefaultSchema             = "parentrag"
	DefaultMetric             = "COSINE"
	DefaultHNSWM              = 16
	DefaultHNSWEfConstruction = 64
	DefaultHNSWEf             = 40
	DefaultMaxConns           = 4
	DefaultInsertBatch        = 256
	DefaultTimeout            = time.Minute
	DefaultBuildTimeout       = time.Hour
	DefaultConnectTimeout     = 10 * time.Second
)

// Limits of the schema and of pgvector.
const (
	// MaxDense is the most dimensions pgvector's HNSW index takes for the
	// vector type.
	MaxDense = 2000
	// MaxSparseTerms is the most non-zero entries of a sparsevec.
	MaxSparseTerms = 16000
	// SparseDim is the dimension of every sparsevec: vocabulary ids must
	// be below it (pgvector's largest).
	SparseDim = 1_000_000_000
	// MaxNameLength is PostgreSQL's identifier length, in bytes.
	MaxNameLength = pgname.MaxLength
	// MaxTopK bounds one search, as Milvus's does.
	MaxTopK = 16384
	// MaxConnsLimit bounds the pool of one process.
	MaxConnsLimit = 64
)

// Errors of the store.
var (
	// ErrInvalidConfig marks a Config that cannot work.
	ErrInvalidConfig = errors.New("invalid postgres configuration")
	// ErrSchemaMismatch marks a table that exists with another shape.
	ErrSchemaMismatch = errors.New("existing table has another schema")
	// ErrRowCount marks a table that does not hold the rows it should.
	ErrRowCount = errors.New("row count mismatch")
	// ErrNotFound marks a table that does not exist.
	ErrNotFound = errors.New("table not found")
	// ErrViewed marks a table that the serving view still reads.
	ErrViewed = errors.New("a view reads the table")
)

// Config describes one revision's child table and how to reach it.
type Config struct {
	// DSN is a libpq connection string or URL; what it leaves out comes
	// from the PG* environment variables, as libpq does.
	DSN string
	// Schema holds the tables and views (default "parentrag"); Open
	// creates it when it does not exist.
	Schema string
	// Table is the revision's table (see TableName).
	Table string
	// Dense is the dimension of the dense vector column; 0 means none.
	Dense int
	// Metric compares dense vectors: COSINE (default), IP or L2.
	Metric string
	// HNSWM, HNSWEfConstruction and HNSWEf tune the HNSW index of the
	// dense column; zero picks the defaults. HNSWEf is raised to the
	// number of children a search asks for.
	HNSWM, HNSWEfConstruction, HNSWEf int
	// MaxConns bounds the connections this process opens (default 4).
	MaxConns int
	// InsertBatch is the number of rows per insert statement (default
	// 256).
	InsertBatch int
	// Timeout bounds each statement (a search, a batch of rows, a count)
	// and BuildTimeout each index build of Finish (default 1 minute and 1
	// hour), so that a database that stops answering fails the call
	// instead of holding it.
	Timeout, BuildTimeout time.Duration
	// RootCAs, when set, holds the CA certificates (PEM) that verify the
	// server under sslmode verify-ca or verify-full, instead of the
	// system's.
	RootCAs []byte
}

// settings is a validated Config with defaults applied.
type settings struct {
	Config
	metric index.Metric
}

func (c Config) settings() (settings, error) {
	s := settings{Config: c}
	if s.Schema == "" {
		s.Schema = DefaultSchema
	}
	if err := CheckName(s.Schema); err != nil {
		return s, fmt.Errorf("schema: %w: %w", err, ErrInvalidConfig)
	}
	if err := CheckName(s.Table); err != nil {
		return s, fmt.Errorf("table: %w: %w", err, ErrInvalidConfig)
	}
	if c.Dense < 0 || c.Dense > MaxDense {
		return s, fmt.Errorf("dense dimension %d must be 0 (none) to %d, the most pgvector's HNSW index takes: %w", c.Dense, MaxDense, ErrInvalidConfig)
	}
	metric := strings.TrimSpace(c.Metric)
	if metric == "" {
		metric = DefaultMetric
	}
	m, err := index.ParseMetric(metric)
	if err != nil {
		return s, fmt.Errorf("metric %q must be COSINE, IP or L2: %w", c.Metric, ErrInvalidConfig)
	}
	s.metric, s.Metric = m, m.String()
	if c.HNSWM < 0 || c.HNSWEfConstruction < 0 || c.HNSWEf < 0 || c.MaxConns < 0 || c.InsertBatch < 0 {
		return s, fmt.Errorf("hnsw parameters, connections and batch size must not be negative: %w", ErrInvalidConfig)
	}
	s.HNSWM = orDefault(c.HNSWM, DefaultHNSWM)
	s.HNSWEfConstruction = orDefault(c.HNSWEfConstruction, DefaultHNSWEfConstruction)
	s.HNSWEf = orDefault(c.HNSWEf, DefaultHNSWEf)
	s.MaxConns = min(orDefault(c.MaxConns, DefaultMaxConns), MaxConnsLimit)
	s.InsertBatch = orDefault(c.InsertBatch, DefaultInsertBatch)
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.BuildTimeout <= 0 {
		s.BuildTimeout = DefaultBuildTimeout
	}
	if s.HNSWM < 2 || s.HNSWM > 100 || s.HNSWEfConstruction < 4 || s.HNSWEfConstruction > 1000 || s.HNSWEf > 1000 {
		return s, fmt.Errorf("hnsw m %d, ef_construction %d, ef_search %d out of pgvector's ranges (2-100, 4-1000, 1-1000): %w", s.HNSWM, s.HNSWEfConstruction, s.HNSWEf, ErrInvalidConfig)
	}
	return s, nil
}

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// CheckName accepts the identifiers this package creates: lower-case
// letters, digits and underscores, a letter or underscore first, at most
// MaxNameLength bytes, so they never need quoting rules beyond double
// quotes.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("name is empty")
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("name %q is longer than %d bytes", name, MaxNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c == '_' || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9')
		if !ok {
			return fmt.Errorf("name %q must be lower-case letters, digits and underscores, not starting with a digit", name)
		}
	}
	return nil
}

// TableName joins parts into a valid identifier (see pgname.Identifier).
func TableName(parts ...string) string { return pgname.Identifier(parts...) }

// ident quotes a checked identifier.
func ident(name string) string { return `"` + name + `"` }

// qualified is schema.name, quoted.
func (s *settings) qualified(name string) string { return ident(s.Schema) + "." + ident(name) }
