package bundle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parentrag/parentrag/internal/retrieval"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/vectorstore"
	"github.com/parentrag/parentrag/internal/retrieval/vectorstore/milvus"
)

// Bundle is an opened revision bundle, ready to answer queries.
type Bundle struct {
	Manifest  Manifest
	Retriever *retrieval.Retriever
	parents   *parentstore.Files
	external  *milvus.Store
}

// Open opens the bundle in dir; see OpenContext.
func Open(dir string) (*Bundle, error) {
	return OpenContext(context.Background(), dir)
}

// OpenContext opens the bundle in dir: it checks the manifest, loads the
// child index (or connects to the Milvus collection that holds it) and the
// embedder state, and opens the parent store for reading by offset. The
// counts of both stores must match the manifest.
func OpenContext(ctx context.Context, dir string) (*Bundle, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	children, external, err := openChildren(ctx, dir, m.VectorStore)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	b := &Bundle{Manifest: m, external: external}
	if b.parents, err = parentstore.OpenFiles(dir); err != nil {
		b.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := checkCounts(ctx, m, children, b.parents); err != nil {
		b.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	e, err := openEmbedder(dir, m.Embedder)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	b.Retriever = &retrieval.Retriever{Embedder: e, Children: children, Parents: b.parents}
	return b, nil
}

// openChildren loads the embedded child index, or connects to the Milvus
// collection the manifest names with credentials from the environment.
func openChildren(ctx context.Context, dir string, ref VectorStoreRef) (vectorstore.VectorStore, *milvus.Store, error) {
	switch ref.Kind {
	case "", VectorStoreEmbedded:
		children, err := vectorstore.LoadEmbedded(filepath.Join(dir, ChildrenDir))
		if err != nil {
			return nil, nil, fmt.Errorf("loading child index: %w", err)
		}
		return children, nil, nil
	case VectorStoreMilvus:
		store, err := milvus.Open(ctx, MilvusConfig(ref))
		if err != nil {
			return nil, nil, fmt.Errorf("connecting to Milvus collection %s: %w", ref.Collection, err)
		}
		return store, store, nil
	}
	return nil, nil, fmt.Errorf("unknown vector store kind %q", ref.Kind)
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
func checkCounts(ctx context.Context, m Manifest, children vectorstore.VectorStore, parents *parentstore.Files) error {
	n, err := children.Count(ctx)
	if err != nil {
		return fmt.Errorf("counting children: %w", err)
	}
	if n != m.Children {
		return fmt.Errorf("child index holds %d children, manifest says %d", n, m.Children)
	}
	if n := parents.Len(); n != m.Parents {
		return fmt.Errorf("parent store holds %d parents, manifest says %d", n, m.Parents)
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
		return embed.LoadLexical(stats)
	case EmbedderOpenAI:
		return openAIEmbedder(cfg)
	case EmbedderHybrid:
		stats, err := os.ReadFile(filepath.Join(dir, LexicalFile))
		if err != nil {
			return nil, fmt.Errorf("reading lexical statistics: %w", err)
		}
		lex, err := embed.LoadLexical(stats)
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

// Close releases the parent store and any connection to Milvus.
func (b *Bundle) Close() error {
	var errs []error
	if b.parents != nil {
		errs = append(errs, b.parents.Close())
	}
	if b.external != nil {
		errs = append(errs, b.external.Close(context.Background()))
	}
	return errors.Join(errs...)
}
