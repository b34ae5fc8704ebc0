package embed

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
)

// cacheKeyTag opens every hashed cache key, so a change of the key's layout
// can never make old entries match.
const cacheKeyTag = "parentrag-embed-cache/1\x00"

// CacheKey is everything besides the text that a dense document vector
// depends on: two embedders with equal keys return bit-identical vectors
// for the same text. The endpoint is deliberately not part of it, since the
// same model served from another URL gives the same vectors.
type CacheKey struct {
	// Model is the embedding model's name as sent to the API.
	Model string
	// Dimensions is the requested vector length; 0 means the model's
	// default, which is a different key from the same length asked for
	// explicitly (a spurious miss, never a wrong hit).
	Dimensions int
	// DocumentPrefix is what the embedder prepends to every document before
	// embedding it (E5's "passage: "); it changes the vectors.
	DocumentPrefix string
}

// CacheKey returns the cache key of the documents this client embeds: its
// model, dimensions and document prefix.
func (c *OpenAI) CacheKey() CacheKey {
	return CacheKey{Model: c.opts.Model, Dimensions: c.opts.Dimensions, DocumentPrefix: c.opts.DocumentPrefix}
}

// Sum returns the 32-byte store key of text under k: the SHA-256 of a
// versioned tag, Model's length (uvarint) and bytes, Dimensions (zigzag
// varint), DocumentPrefix's length and bytes, then text. Only text is not
// length-prefixed, and it comes last, so no two (key, text) pairs hash the
// same bytes.
func (k CacheKey) Sum(text string) [32]byte {
	return sumText(k.header(), text)
}

// header is the encoding of k that precedes the text in Sum.
func (k CacheKey) header() []byte {
	b := make([]byte, 0, len(cacheKeyTag)+len(k.Model)+len(k.DocumentPrefix)+3*binary.MaxVarintLen64)
	b = append(b, cacheKeyTag...)
	b = binary.AppendUvarint(b, uint64(len(k.Model)))
	b = append(b, k.Model...)
	b = binary.AppendVarint(b, int64(k.Dimensions))
	b = binary.AppendUvarint(b, uint64(len(k.DocumentPrefix)))
	return append(b, k.DocumentPrefix...)
}

// sumText hashes a precomputed header followed by text.
func sumText(header []byte, text string) [32]byte {
	h := sha256.New()
	h.Write(header)
	_, _ = io.WriteString(h, text)
	var out [32]byte
	h.Sum(out[:0])
	return out
}
