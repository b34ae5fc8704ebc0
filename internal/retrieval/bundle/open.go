package bundle

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parentrag/parentrag/internal/retrieval"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/vectorstore"
)

// Bundle is an opened revision bundle, ready to answer queries.
type Bundle struct {
	Manifest  Manifest
	Retriever *retrieval.Retriever
	parents   *parentstore.Files
}

// Open opens the bundle in dir: it checks the manifest, loads the child
// index and the embedder state, and opens the parent store for reading by
// offset. The counts on disk must match the manifest.
func Open(dir string) (*Bundle, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	children, err := vectorstore.LoadEmbedded(filepath.Join(dir, ChildrenDir))
	if err != nil {
		return nil, fmt.Errorf("%s: loading child index: %w", dir, err)
	}
	parents, err := parentstore.OpenFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := checkCounts(m, children, parents); err != nil {
		parents.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	e, err := openEmbedder(dir, m.Embedder)
	if err != nil {
		parents.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	r := &retrieval.Retriever{Embedder: e, Children: children, Parents: parents}
	return &Bundle{Manifest: m, Retriever: r, parents: parents}, nil
}

// checkCounts refuses a bundle whose stores disagree with its manifest.
func checkCounts(m Manifest, children *vectorstore.Embedded, parents *parentstore.Files) error {
	if n := children.Stats().Records; n != m.Children {
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
		return embed.NewOpenAI(embed.OpenAIOptions{
			Endpoint: cfg.Endpoint, Model: cfg.Model, Dimensions: cfg.Dimensions, APIKeyEnv: cfg.APIKeyEnv,
		})
	default:
		return nil, fmt.Errorf("unknown embedder kind %q", cfg.Kind)
	}
}

// Close releases the parent store.
func (b *Bundle) Close() error { return b.parents.Close() }
