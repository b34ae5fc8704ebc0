package controllers

import (
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

// withCache puts the embedding model of e behind the Corpus's embedding
// cache (see embed.WithFileCache); release closes the cache.
func (r *CorpusReconciler) withCache(c *v1alpha1.Corpus, e embed.Embedder) (embed.Embedder, *embed.Cached, func(), error) {
	return embed.WithFileCache(e, r.cacheDir(c))
}
