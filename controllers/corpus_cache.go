package controllers

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
)

// cacheDir is where embedding caches live, one directory per Corpus.
func (r *CorpusReconciler) cacheDir(c *v1alpha1.Corpus) string {
	root := r.EmbeddingCacheDir
	if root == "" {
		root = filepath.Join(os.TempDir(), "parentrag-embedding-cache")
	}
	return filepath.Join(root, c.Namespace, c.Name)
}

// withCache wraps the embedding model of e in the Corpus's embedding
// cache, so that a build re-embeds only children whose text is new; the
// lexical embedder needs none and is returned as is, with a nil cache.
// release closes the cache.
func (r *CorpusReconciler) withCache(c *v1alpha1.Corpus, e embed.Embedder) (out embed.Embedder, cache *embed.Cached, release func(), err error) {
	release = func() {}
	var dense *embed.OpenAI
	switch v := e.(type) {
	case *embed.OpenAI:
		dense = v
	case *embed.Hybrid:
		dense, _ = v.Dense.(*embed.OpenAI)
	}
	if dense == nil {
		return e, nil, release, nil
	}
	dir := r.cacheDir(c)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, release, fmt.Errorf("embedding cache: %w", err)
	}
	store, err := embed.OpenFileCache(dir)
	if err != nil {
		return nil, nil, release, fmt.Errorf("embedding cache: %w", err)
	}
	cache = embed.NewCached(dense, store, dense.CacheKey())
	release = func() { store.Close() }
	if h, ok := e.(*embed.Hybrid); ok {
		return &embed.Hybrid{Lexical: h.Lexical, Dense: cache}, cache, release, nil
	}
	return cache, cache, release, nil
}
