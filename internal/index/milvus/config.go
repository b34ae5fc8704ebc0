package milvus

import (
	"fmt"
	"strings"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"

	"github.com/parentrag/parentrag/internal/index"
)

// Index types for the dense field.
const (
	IndexHNSW = "HNSW"
	IndexAuto = "AUTOINDEX"
)

// Defaults applied to zero Config fields.
const (
	DefaultMetric             = "COSINE"
	DefaultIndex              = IndexAuto
	DefaultHNSWM              = 16
	DefaultHNSWEfConstruction = 200
	DefaultHNSWEf             = 64
	DefaultShards             = 1
	DefaultConsistency        = "Bounded"
	DefaultInsertBatch        = 512
	DefaultDialTimeout        = 10 * time.Second
	DefaultRetryAttempts      = 5
	DefaultRetryBackoff       = 200 * time.Millisecond
	DefaultRetryMaxBackoff    = 5 * time.Second
)

// Limits of the schema and of Milvus.
const (
	// MaxIDLength is the max_length of the id (primary key) field, in bytes.
	MaxIDLength = 64
	// MaxParentIDLength is the max_length of the parent_id field.
	MaxParentIDLength = 256
	// MaxDocIDLength is the max_length of the doc_id field.
	MaxDocIDLength = 1024
	// MaxTextLength is the max_length of the text field; longer child texts
	// are cut (at a character boundary) to fit.
	MaxTextLength = 65535
	// MaxDense is the largest dense dimension Milvus accepts.
	MaxDense = 32768
	// MaxTopK is the largest limit (topk + offset) of one Milvus search.
	MaxTopK = 16384
	// MaxShards is the largest shard count accepted here.
	MaxShards = 16
	// maxBatchBytes bounds the estimated size of one insert request, well
	// below Milvus's 64 MiB default gRPC limit.
	maxBatchBytes = 16 << 20
)

// Retry is the policy for transient failures (Milvus unavailable, a
// deadline exceeded on the server, rate limiting, a collection still
// loading): Attempts tries in all, waiting Backoff, then twice as long each
// time, at most MaxBackoff. The Milvus client also retries Unavailable and
// ResourceExhausted gRPC errors by itself (up to 6 tries) underneath.
type Retry struct {
	Attempts   int
	Backoff    time.Duration
	MaxBackoff time.Duration
}

// Config describes one child collection and how to reach it.
type Config struct {
	// Address is host:port of the Milvus proxy (https:// turns TLS on).
	Address string
	// Database is the Milvus database; empty means "default". Open creates
	// it when it does not exist.
	Database string
	// Token authenticates with an API key or "user:password"; it wins over
	// Username and Password.
	Token    string
	Username string
	Password string
	// TLS dials with TLS (system roots).
	TLS bool
	// Collection is the physical collection name: letters, digits and
	// underscores, a letter or underscore first.
	Collection string
	// Dense is the dimension of the dense vector field; 0 means the
	// collection has no dense field (sparse only).
	Dense int
	// Metric compares dense vectors: COSINE (default), IP or L2. Sparse
	// vectors are always compared by IP.
	Metric string
	// Index is the dense index: HNSW or AUTOINDEX (default).
	Index string
	// HNSWM, HNSWEfConstruction and HNSWEf tune an HNSW index; zero picks
	// the defaults. HNSWEf is raised to the search limit when lower, as
	// Milvus requires ef >= k.
	HNSWM, HNSWEfConstruction, HNSWEf int
	// Shards is the number of shards of the collection (default 1).
	Shards int
	// Consistency is the collection's consistency level: Strong, Bounded
	// (default), Session or Eventually. Count always reads Strong.
	Consistency string
	// InsertBatch is the number of rows per insert request (default 512);
	// a batch is also cut at about 16 MiB.
	InsertBatch int
	// DialTimeout bounds each connection attempt of Open (default 10 s).
	DialTimeout time.Duration
	// Retry is the policy for transient failures.
	Retry Retry
}

// settings is a validated Config with defaults applied.
type settings struct {
	Config
	metric      index.Metric
	consistency entity.ConsistencyLevel
}

func (c Config) settings() (settings, error) {
	s := settings{Config: c}
	if strings.TrimSpace(c.Address) == "" {
		return s, fmt.Errorf("address is empty: %w", ErrInvalidConfig)
	}
	if err := checkName(c.Collection); err != nil {
		return s, fmt.Errorf("collection: %w: %w", err, ErrInvalidConfig)
	}
	if c.Database != "" {
		if err := checkName(c.Database); err != nil {
			return s, fmt.Errorf("database: %w: %w", err, ErrInvalidConfig)
		}
	}
	if c.Dense < 0 || c.Dense == 1 || c.Dense > MaxDense {
		return s, fmt.Errorf("dense dimension %d must be 0 (none) or in [2, %d]: %w", c.Dense, MaxDense, ErrInvalidConfig)
	}
	metric := c.Metric
	if strings.TrimSpace(metric) == "" {
		metric = DefaultMetric
	}
	m, err := index.ParseMetric(metric)
	if err != nil {
		return s, fmt.Errorf("metric %q must be COSINE, IP or L2: %w", c.Metric, ErrInvalidConfig)
	}
	s.metric = m
	s.Metric = m.String()
	switch strings.ToUpper(strings.TrimSpace(c.Index)) {
	case "":
		s.Index = DefaultIndex
	case IndexHNSW:
		s.Index = IndexHNSW
	case IndexAuto:
		s.Index = IndexAuto
	default:
		return s, fmt.Errorf("index %q must be HNSW or AUTOINDEX: %w", c.Index, ErrInvalidConfig)
	}
	if c.HNSWM < 0 || c.HNSWEfConstruction < 0 || c.HNSWEf < 0 {
		return s, fmt.Errorf("hnsw parameters must not be negative: %w", ErrInvalidConfig)
	}
	if c.HNSWM == 0 {
		s.HNSWM = DefaultHNSWM
	}
	if s.HNSWM < 2 || s.HNSWM > 2048 {
		return s, fmt.Errorf("hnsw m %d must be in [2, 2048]: %w", s.HNSWM, ErrInvalidConfig)
	}
	if c.HNSWEfConstruction == 0 {
		s.HNSWEfConstruction = DefaultHNSWEfConstruction
	}
	if c.HNSWEf == 0 {
		s.HNSWEf = DefaultHNSWEf
	}
	switch {
	case c.Shards == 0:
		s.Shards = DefaultShards
	case c.Shards < 0 || c.Shards > MaxShards:
		return s, fmt.Errorf("shards %d must be in [1, %d]: %w", c.Shards, MaxShards, ErrInvalidConfig)
	}
	cons := c.Consistency
	if cons == "" {
		cons = DefaultConsistency
	}
	switch strings.ToLower(cons) {
	case "strong":
		s.consistency = entity.ClStrong
	case "bounded":
		s.consistency = entity.ClBounded
	case "session":
		s.consistency = entity.ClSession
	case "eventually":
		s.consistency = entity.ClEventually
	default:
		return s, fmt.Errorf("consistency %q must be Strong, Bounded, Session or Eventually: %w", c.Consistency, ErrInvalidConfig)
	}
	switch {
	case c.InsertBatch == 0:
		s.InsertBatch = DefaultInsertBatch
	case c.InsertBatch < 0:
		return s, fmt.Errorf("insert batch %d must be positive: %w", c.InsertBatch, ErrInvalidConfig)
	}
	if c.DialTimeout <= 0 {
		s.DialTimeout = DefaultDialTimeout
	}
	if c.Retry.Attempts <= 0 {
		s.Retry.Attempts = DefaultRetryAttempts
	}
	if c.Retry.Backoff <= 0 {
		s.Retry.Backoff = DefaultRetryBackoff
	}
	if c.Retry.MaxBackoff <= 0 {
		s.Retry.MaxBackoff = max(DefaultRetryMaxBackoff, s.Retry.Backoff)
	}
	return s, nil
}

// checkName applies Milvus's rule for collection, alias and database
// names.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("name is empty")
	}
	if len(name) > 255 {
		return fmt.Errorf("name %q is longer than 255 characters", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return fmt.Errorf("name %q must be letters, digits and underscores, not starting with a digit", name)
		}
	}
	return nil
}
