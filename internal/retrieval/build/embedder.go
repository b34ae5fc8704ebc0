package build

import (
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
)

// NewEmbedder is the build-side embedder of a recorded configuration: the
// lexical embedder, an OpenAI-compatible one reading its key from
// cfg.APIKeyEnv, or both for a hybrid.
func NewEmbedder(cfg bundle.Embedder) (embed.Embedder, error) {
	return NewEmbedderWithKey(cfg, "")
}

// NewEmbedderWithKey is NewEmbedder with the model's API key given (the
// operator reads it from a Secret); with apiKey "" it is read from
// cfg.APIKeyEnv.
func NewEmbedderWithKey(cfg bundle.Embedder, apiKey string) (embed.Embedder, error) {
	if cfg.Kind == bundle.EmbedderLexical {
		return bm25.NewLexical(cfg.K1, cfg.B)
	}
	dense, err := embed.NewOpenAI(embed.OpenAIOptions{Endpoint: cfg.Endpoint, Model: cfg.Model, Dimensions: cfg.Dimensions, APIKey: apiKey, APIKeyEnv: cfg.APIKeyEnv})
	if err != nil || cfg.Kind != bundle.EmbedderHybrid {
		return dense, err
	}
	lex, err := bm25.NewLexical(cfg.K1, cfg.B)
	if err != nil {
		return nil, err
	}
	return &embed.Hybrid{Lexical: lex, Dense: dense}, nil
}

// NewCachedEmbedder is NewEmbedder with the embedding cache in cacheDir
// around the embedding model (see embed.WithFileCache); with cacheDir ""
// there is no cache and cache is nil. release closes the cache.
func NewCachedEmbedder(cfg bundle.Embedder, cacheDir string) (e embed.Embedder, cache *embed.Cached, release func(), err error) {
	e, err = NewEmbedder(cfg)
	if err != nil || cacheDir == "" {
		return e, nil, func() {}, err
	}
	return embed.WithFileCache(e, cacheDir)
}
