package embed

import (
	"errors"
	"fmt"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// maxCacheDims is the longest vector a cache store accepts (and, on disk,
// the largest length a record may claim before it counts as corrupt).
const maxCacheDims = 1 << 20

// ErrCacheClosed is returned by a cache store used after Close.
var ErrCacheClosed = errors.New("embedding cache is closed")

// CacheStore keeps dense document vectors under 32-byte keys
// (CacheKey.Sum). Implementations are safe for concurrent use and never
// return a vector stored under another key.
type CacheStore interface {
	// Get returns, for each key, its vector and true, or a zero Vector and
	// false when the key is not stored. The vectors are the caller's to
	// modify. An error means the lookup as a whole failed.
	Get(keys [][32]byte) ([]vector.Vector, []bool, error)
	// Put stores vecs[i] under keys[i]. Every vector must be dense only,
	// with 1 to 2^20 values. A key already stored keeps its first vector.
	// Put does not retain vecs: later changes to them do not reach the store.
	Put(keys [][32]byte, vecs []vector.Vector) error
	// Close releases the store; later calls fail with ErrCacheClosed.
	Close() error
}

// checkCacheable verifies that keys and vecs pair up and that every vector
// is dense only, with 1 to maxCacheDims values.
func checkCacheable(keys [][32]byte, vecs []vector.Vector) error {
	if len(keys) != len(vecs) {
		return fmt.Errorf("embedding cache: %d keys for %d vectors", len(keys), len(vecs))
	}
	for i, v := range vecs {
		if err := checkDense(v); err != nil {
			return fmt.Errorf("embedding cache: vector %d: %w", i, err)
		}
	}
	return nil
}

// checkDense accepts a vector with a dense part of 1 to maxCacheDims values
// and no sparse part: the only shape the cache stores.
func checkDense(v vector.Vector) error {
	if v.Sparse != nil {
		return errors.New("has a sparse part; only dense vectors are cached")
	}
	if len(v.Dense) == 0 || len(v.Dense) > maxCacheDims {
		return fmt.Errorf("has %d dense values, want 1 to %d", len(v.Dense), maxCacheDims)
	}
	return nil
}
