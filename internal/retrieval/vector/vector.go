// Package vector holds the vector types shared by embedders and vector stores.
package vector

// Sparse is a sparse vector: Indices are strictly increasing term ids and
// Values their weights. It is the wire shape Milvus uses for
// SPARSE_FLOAT_VECTOR fields.
type Sparse struct {
	Indices []uint32  `json:"indices"`
	Values  []float32 `json:"values"`
}

// Vector is one embedding. A lexical embedder fills Sparse, a neural one
// fills Dense; a hybrid embedder may fill both.
type Vector struct {
	Sparse *Sparse   `json:"sparse,omitempty"`
	Dense  []float32 `json:"dense,omitempty"`
}

// Dot returns the inner product of two sparse vectors. Both must have
// strictly increasing indices; the result is exact.
func (s Sparse) Dot(o Sparse) float32 {
	var sum float32
	i, j := 0, 0
	for i < len(s.Indices) && j < len(o.Indices) {
		switch {
		case s.Indices[i] == o.Indices[j]:
			sum += s.Values[i] * o.Values[j]
			i++
			j++
		case s.Indices[i] < o.Indices[j]:
			i++
		default:
			j++
		}
	}
	return sum
}

// DotDense returns the inner product of two dense vectors of equal length.
func DotDense(a, b []float32) float32 {
	var sum float32
	for i := range a {
		sum += a[i] * b[i]
	}
	return sum
}
