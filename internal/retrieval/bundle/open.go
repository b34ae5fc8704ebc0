package bundle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/index/postgres"
	"github.com/parentrag/parentrag/internal/index/segment"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// Bundle is an opened revision bundle, ready to answer queries.
type Bundle struct {
	Manifest  Manifest
	Retriever *retrieve.Retriever
	parents   *parentstore.Files
	external  *milvus.Store
	pg        *postgres.Store
	embedded  *embedded.Store
	segments  *segment.Store
}

// Open opens the bundle in dir; see OpenContext.
func Open(dir string) (*Bundle, error) {
	return OpenContext(context.Background(), dir)
}

// OpenContext opens the bundle in dir with the environment's Milvus
// credentials; see OpenWith.
func OpenContext(ctx context.Context, dir string) (*Bundle, error) {
	return OpenWith(ctx, dir, OpenOptions{})
}

// OpenOptions tune OpenWith.
type OpenOptions struct {
	// MilvusConfig returns the client configuration of a child index held
	// in Milvus; MilvusConfig(ref), with the environment's credentials,
	// when nil.
	MilvusConfig func(VectorStoreRef) (milvus.Config, error)
	// PostgresConfig returns the configuration of a child index held in
	// PostgreSQL; PostgresConfig(ref), with the environment's
	// connection, when nil.
	PostgresConfig func(VectorStoreRef) (postgres.Config, error)
}

// ErrCountMismatch marks a bundle whose stores hold other counts than its
// manifest says.
var ErrCountMismatch = errors.New("the stores disagree with the manifest")

// OpenWith opens the bundle in dir: it checks the manifest, verifies the
// size and sha256 of every file it lists (an error wrapping ErrCorrupt
// names the first file that differs), loads the
// child index (or connects to the Milvus collection that holds it) and the
// embedder state, and opens the parent store for reading by offset. The
// counts of both stores must match the manifest; an error wrapping
// ErrCountMismatch says which does not.
func OpenWith(ctx context.Context, dir string, opts OpenOptions) (*Bundle, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if err := VerifyFiles(ctx, dir, m); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	children, external, err := openChildren(ctx, dir, m, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	b := &Bundle{Manifest: m, external: external}
	b.embedded, _ = children.(*embedded.Store)
	b.pg, _ = children.(*postgres.Store)
	b.segments, _ = children.(*segment.Store)
	if b.parents, err = openParents(dir, m); err != nil {
		b.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := checkCounts(ctx, m, children, b.parents); err != nil {
		b.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	e, err := b.queryEmbedder(dir)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	b.Retriever = &retrieve.Retriever{Embedder: e, Children: children, Parents: b.parents, MergeOverlaps: m.ParentsOverlap(), Leaf: m.Leaf()}
	return b, nil
}

// queryEmbedder is the embedder of the bundle's queries: the one its
// segments' statistics fit, whose vocabulary ids are theirs, or the one
// its manifest records.
func (b *Bundle) queryEmbedder(dir string) (embed.Embedder, error) {
	if b.segments != nil {
		return b.segments.Set().Lexical(), nil
	}
	return openEmbedder(dir, b.Manifest.Embedder)
}

// openChildren loads the embedded child index or the segments, or
// connects to the Milvus collection the manifest names with credentials
// from the environment.
func openChildren(ctx context.Context, dir string, m Manifest, opts OpenOptions) (index.Searcher, *milvus.Store, error) {
	ref := m.VectorStore
	switch ref.Kind {
	case VectorStoreSegments:
		store, err := openSegments(dir, m)
		if err != nil {
			return nil, nil, fmt.Errorf("opening child index segments: %w", err)
		}
		return store, nil, nil
	case "", VectorStoreEmbedded:
		children, err := embedded.Load(filepath.Join(dir, ChildrenDir))
		if err != nil {
			return nil, nil, fmt.Errorf("loading child index: %w", err)
		}
		return children, nil, nil
	case VectorStoreMilvus:
		cfg := MilvusConfig(ref)
		if opts.MilvusConfig != nil {
			var err error
			if cfg, err = opts.MilvusConfig(ref); err != nil {
				return nil, nil, err
			}
		}
		store, err := milvus.Open(ctx, cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("connecting to Milvus collection %s: %w", ref.Collection, err)
		}
		return store, store, nil
	case VectorStorePostgres:
		store, err := openPostgres(ctx, ref, opts)
		return store, nil, err
	}
	return nil, nil, fmt.Errorf("unknown vector store kind %q", ref.Kind)
}

// openPostgres connects to the revision's table the manifest names.
func openPostgres(ctx context.Context, ref VectorStoreRef, opts OpenOptions) (*postgres.Store, error) {
	cfg := PostgresConfig(ref)
	if opts.PostgresConfig != nil {
		var err error
		if cfg, err = opts.PostgresConfig(ref); err != nil {
			return nil, err
		}
	}
	store, err := postgres.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to Postgres table %s.%s: %w", ref.Schema, ref.Table, err)
	}
	return store, nil
}

// PostgresEnvPrefix begins the environment variables that carry a
// Postgres child index's connection to its readers, one per key of the
// Corpus's connection Secret (see postgres.SecretDSN):
// PARENTRAG_POSTGRES_DSN, _URI, _HOST, _PORT, _DBNAME, _USER, _USERNAME
// and _PASSWORD; PARENTRAG_POSTGRES_CA holds the CA certificates (PEM)
// that verify the server. With none of them set, pgx reads libpq's PG*
// variables.
const (
	PostgresEnvPrefix = "PARENTRAG_POSTGRES_"
	PostgresCAEnv     = PostgresEnvPrefix + "CA"
)

// PostgresEnv names the variable that carries a connection Secret's key.
func PostgresEnv(key string) string { return PostgresEnvPrefix + strings.ToUpper(key) }

// PostgresConfig is the configuration of a Postgres reference with the
// environment's connection (see PostgresEnvPrefix), the reference's
// sslmode when the connection string sets none, and its pool bound.
func PostgresConfig(ref VectorStoreRef) postgres.Config {
	data := map[string][]byte{}
	for _, k := range []string{postgres.KeyDSN, postgres.KeyURI, postgres.KeyHost, postgres.KeyPort, postgres.KeyDBName, postgres.KeyUser, postgres.KeyUsername, postgres.KeyPassword} {
		if v, ok := os.LookupEnv(PostgresEnv(k)); ok {
			data[k] = []byte(v)
		}
	}
	dsn, _ := postgres.SecretDSN(data) // none of them: "", libpq's PG* variables
	return postgres.Config{
		DSN: postgres.WithSSLMode(dsn, ref.SSLMode), RootCAs: []byte(os.Getenv(PostgresCAEnv)),
		Schema: ref.Schema, Table: ref.Table, Dense: ref.Dense, Metric: ref.Metric,
		HNSWM: ref.HNSWM, HNSWEfConstruction: ref.HNSWEfConstruction, HNSWEf: ref.HNSWEf, MaxConns: ref.MaxConns,
	}
}

// MilvusConfig is the client configuration of a Milvus reference, with the
// credentials of the environment (MILVUS_TOKEN, or MILVUS_USERNAME and
// MILVUS_PASSWORD).
func MilvusConfig(ref VectorStoreRef) milvus.Config {
	return milvus.Config{
		Address: ref.Address, Database: ref.Database, Collection: ref.Collection, TLS: ref.TLS,
		Dense: ref.Dense, Metric: ref.Metric, Consistency: ref.Consistency,
		Index: ref.Index, HNSWM: ref.HNSWM, HNSWEfConstruction: ref.HNSWEfConstruction, HNSWEf: ref.HNSWEf,
		Token: os.Getenv("MILVUS_TOKEN"), Username: os.Getenv("MILVUS_USERNAME"), Password: os.Getenv("MILVUS_PASSWORD"),
	}
}

// checkCounts refuses a bundle whose stores disagree with its manifest.
func checkCounts(ctx context.Context, m Manifest, children index.Searcher, parents *parentstore.Files) error {
	n, err := children.Count(ctx)
	if err != nil {
		return fmt.Errorf("counting children: %w", err)
	}
	if n != m.Children {
		return fmt.Errorf("%w: the child index holds %d children, the manifest says %d", ErrCountMismatch, n, m.Children)
	}
	if n := parents.Len(); n != m.Parents {
		return fmt.Errorf("%w: the parent store holds %d parents, the manifest says %d", ErrCountMismatch, n, m.Parents)
	}
	return nil
}

// openEmbedder rebuilds the query-side embedder the bundle was built with.
func openEmbedder(dir string, cfg Embedder) (embed.Embedder, error) {
	switch cfg.Kind {
	case EmbedderLexical:
		stats, err := os.ReadFile(filepath.Join(dir, LexicalFile))
		if err != nil {
			return nil, fmt.Errorf("reading lexical statistics: %w", err)
		}
		return bm25.LoadLexical(stats)
	case EmbedderOpenAI:
		return openAIEmbedder(cfg)
	case EmbedderHybrid:
		stats, err := os.ReadFile(filepath.Join(dir, LexicalFile))
		if err != nil {
			return nil, fmt.Errorf("reading lexical statistics: %w", err)
		}
		lex, err := bm25.LoadLexical(stats)
		if err != nil {
			return nil, err
		}
		dense, err := openAIEmbedder(cfg)
		if err != nil {
			return nil, err
		}
		return &embed.Hybrid{Lexical: lex, Dense: dense}, nil
	default:
		return nil, fmt.Errorf("unknown embedder kind %q", cfg.Kind)
	}
}

// openAIEmbedder is the endpoint client of an embedder configuration; the
// API key comes from the variable it names.
func openAIEmbedder(cfg Embedder) (*embed.OpenAI, error) {
	return embed.NewOpenAI(embed.OpenAIOptions{
		Endpoint: cfg.Endpoint, Model: cfg.Model, Dimensions: cfg.Dimensions, APIKeyEnv: cfg.APIKeyEnv,
	})
}

// ParentIDs returns the id of every parent in the bundle's parent store,
// sorted, so that callers sampling parents do so deterministically. It
// lists what the store holds, not what the manifest says; a Bundle that
// was not opened (a literal) has none.
func (b *Bundle) ParentIDs() []string {
	if b.parents == nil {
		return nil
	}
	ids := b.parents.IDs()
	slices.Sort(ids)
	return ids
}

// Close releases the parent store, the embedded child index (unmapping its
// file once searches in flight are done; later searches fail with
// index.ErrClosed) and any connection to Milvus.
func (b *Bundle) Close() error {
	var errs []error
	if b.embedded != nil {
		errs = append(errs, b.embedded.Close())
	}
	if b.segments != nil {
		errs = append(errs, b.segments.Close())
	}
	if b.parents != nil {
		errs = append(errs, b.parents.Close())
	}
	if b.external != nil {
		errs = append(errs, b.external.Close(context.Background()))
	}
	if b.pg != nil {
		b.pg.Close()
	}
	return errors.Join(errs...)
}
