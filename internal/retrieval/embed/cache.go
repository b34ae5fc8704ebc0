package embed

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// Cached wraps a dense embedder with a CacheStore so that a new revision
// of an index pays the embedding API only for children whose text changed.
// EmbedDocuments looks every text up under Key, sends only the misses to
// Inner, in one call and in input order, stores what comes back, and
// returns every vector in input order; a text repeated within one call is
// embedded once. Queries are not cached.
//
// Wrap only embedders whose vector for a text depends on nothing but Key
// and the text. The lexical BM25 embedder (and so Hybrid) must not be
// wrapped: its vectors depend on the statistics of the corpus it was
// fitted on. Wrap the dense half instead: &Hybrid{Lexical: lex, Dense:
// NewCached(openai, store, openai.CacheKey())}.
//
// A failing Store never fails EmbedDocuments: a lookup error counts every
// text as a miss and a write error leaves the vectors uncached; both are
// counted in Stats and passed to OnStoreError. Cached is safe for
// concurrent use when Inner and Store are.
type Cached struct {
	// Inner embeds the misses; it must return dense vectors only.
	Inner Embedder
	// Store keeps the vectors across calls, revisions and, for a
	// FileCache, processes.
	Store CacheStore
	// Key is what, besides the text, Inner's vectors depend on.
	Key CacheKey
	// OnStoreError, when set, is called with every error of Store.
	OnStoreError func(error)

	header                    []byte
	hits, misses, storeErrors atomic.Int64
}

var (
	_ Embedder = (*Cached)(nil)
	_ Fitter   = (*Cached)(nil)
)

// NewCached returns inner cached in store under key.
func NewCached(inner Embedder, store CacheStore, key CacheKey) *Cached {
	return &Cached{Inner: inner, Store: store, Key: key, header: key.header()}
}

// CacheStats counts the texts of successful EmbedDocuments calls: Hits
// were served without Inner (found in the store, or repeated within the
// call), Misses were sent to Inner. StoreErrors counts failed store calls.
type CacheStats struct {
	Hits, Misses, StoreErrors int64
}

// HitRate is Hits/(Hits+Misses), the fraction of texts not sent to the
// embedding API; 0 before any text.
func (s CacheStats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// Stats returns the counts so far; each field is read atomically.
func (c *Cached) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), StoreErrors: c.storeErrors.Load()}
}

// Fit forwards to Inner when it is a Fitter and does nothing otherwise, so
// a Cached can stand wherever its Inner did. A fitted Inner's vectors
// depend on the corpus, which the cache key does not capture: see Cached.
func (c *Cached) Fit(texts []string) error {
	if f, ok := c.Inner.(Fitter); ok {
		return f.Fit(texts)
	}
	return nil
}

// EmbedQuery passes through to Inner: queries are not cached.
func (c *Cached) EmbedQuery(ctx context.Context, text string) (vector.Vector, error) {
	return c.Inner.EmbedQuery(ctx, text)
}

// EmbedDocuments returns one dense vector per text, in input order, each
// bit-identical to what Inner returned for that text when it was first
// embedded under Key. Only texts found neither in the store nor earlier in
// texts reach Inner, in a single call; on Inner's error it returns that
// error and no vectors. Every returned vector has its own backing array.
func (c *Cached) EmbedDocuments(ctx context.Context, texts []string) ([]vector.Vector, error) {
	u := c.dedup(texts)
	vecs, found := c.lookup(u.keys)
	miss := make([]int, 0, len(u.keys))
	for i, ok := range found {
		if !ok {
			miss = append(miss, i)
		}
	}
	if err := c.embedMisses(ctx, u, miss, vecs); err != nil {
		return nil, err
	}
	c.hits.Add(int64(len(texts) - len(miss)))
	c.misses.Add(int64(len(miss)))
	return u.spread(vecs), nil
}

// uniqueTexts is a call's texts with repeats removed.
type uniqueTexts struct {
	keys  [][32]byte // store key of each distinct text, in first-seen order
	texts []string   // the distinct texts, in the same order
	slot  []int      // slot[i] is the position in keys of the call's text i
}

// dedup hashes texts under c's key and removes repeats.
func (c *Cached) dedup(texts []string) uniqueTexts {
	header := c.header
	if header == nil {
		header = c.Key.header()
	}
	u := uniqueTexts{slot: make([]int, len(texts))}
	first := make(map[[32]byte]int, len(texts))
	for i, t := range texts {
		k := sumText(header, t)
		j, ok := first[k]
		if !ok {
			j = len(u.keys)
			first[k] = j
			u.keys, u.texts = append(u.keys, k), append(u.texts, t)
		}
		u.slot[i] = j
	}
	return u
}

// spread returns the vector of every text of the call from the vectors of
// the distinct texts, copying those that serve more than one position.
func (u uniqueTexts) spread(vecs []vector.Vector) []vector.Vector {
	out := make([]vector.Vector, len(u.slot))
	used := make([]bool, len(vecs))
	for i, j := range u.slot {
		out[i] = vecs[j]
		if used[j] {
			out[i].Dense = slices.Clone(vecs[j].Dense)
		}
		used[j] = true
	}
	return out
}

// lookup returns the stored vectors of keys; a store error makes every key
// a miss.
func (c *Cached) lookup(keys [][32]byte) ([]vector.Vector, []bool) {
	if len(keys) == 0 {
		return nil, nil
	}
	vecs, found, err := c.Store.Get(keys)
	if err == nil && (len(vecs) != len(keys) || len(found) != len(keys)) {
		err = fmt.Errorf("embedding cache: %d vectors and %d flags for %d keys", len(vecs), len(found), len(keys))
	}
	if err != nil {
		c.storeError(err)
		return make([]vector.Vector, len(keys)), make([]bool, len(keys))
	}
	return vecs, found
}

// embedMisses embeds the distinct texts at positions miss in one call to
// Inner, checks that they are dense, places them in vecs and stores them.
func (c *Cached) embedMisses(ctx context.Context, u uniqueTexts, miss []int, vecs []vector.Vector) error {
	if len(miss) == 0 {
		return nil
	}
	texts, keys := make([]string, len(miss)), make([][32]byte, len(miss))
	for n, i := range miss {
		texts[n], keys[n] = u.texts[i], u.keys[i]
	}
	got, err := c.Inner.EmbedDocuments(ctx, texts)
	if err != nil {
		return err
	}
	if err := checkEmbedded(got, len(texts)); err != nil {
		return err
	}
	for n, i := range miss {
		vecs[i] = got[n]
	}
	// The store keeps its own copy, so later changes to the returned
	// vectors cannot reach it.
	if err := c.Store.Put(keys, got); err != nil {
		c.storeError(err)
	}
	return nil
}

// checkEmbedded verifies that Inner returned n cacheable (dense) vectors.
func checkEmbedded(vecs []vector.Vector, n int) error {
	if len(vecs) != n {
		return fmt.Errorf("cached embedder: inner embedder returned %d vectors for %d texts", len(vecs), n)
	}
	for i, v := range vecs {
		if err := checkDense(v); err != nil {
			return fmt.Errorf("cached embedder: inner vector %d %w", i, err)
		}
	}
	return nil
}

// storeError counts err and hands it to OnStoreError.
func (c *Cached) storeError(err error) {
	c.storeErrors.Add(1)
	if c.OnStoreError != nil {
		c.OnStoreError(err)
	}
}
