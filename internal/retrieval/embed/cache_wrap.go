package embed

import (
	"fmt"
	"os"
)

// WithFileCache puts the embedding model inside e (an OpenAI embedder, or
// the dense half of a Hybrid) behind the file cache in dir, created when
// missing. An embedder without a model (the lexical one, whose vectors
// depend on the corpus) is returned as it is, with a nil cache. release
// closes the cache; it is never nil.
func WithFileCache(e Embedder, dir string) (out Embedder, cache *Cached, release func(), err error) {
	release = func() {}
	var dense *OpenAI
	switch v := e.(type) {
	case *OpenAI:
		dense = v
	case *Hybrid:
		dense, _ = v.Dense.(*OpenAI)
	}
	if dense == nil {
		return e, nil, release, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, release, fmt.Errorf("embedding cache: %w", err)
	}
	store, err := OpenFileCache(dir)
	if err != nil {
		return nil, nil, release, fmt.Errorf("embedding cache: %w", err)
	}
	cache = NewCached(dense, store, dense.CacheKey())
	release = func() { store.Close() }
	if h, ok := e.(*Hybrid); ok {
		return &Hybrid{Lexical: h.Lexical, Dense: cache}, cache, release, nil
	}
	return cache, cache, release, nil
}
