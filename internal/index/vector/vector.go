// Package vector holds the vector types shared by embedders and vector stores.
package vector

import "slices"

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

// Clone returns v with arrays of its own: changing v's afterwards leaves
// the clone as it was.
func (v Vector) Clone() Vector {
	out := Vector{Dense: slices.Clone(v.Dense)}
	if v.Sparse != nil {
		out.Sparse = &Sparse{Indices: slices.Clone(v.Sparse.Indices), Values: slices.Clone(v.Sparse.Values)}
	}
	return out
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

// AddScaled returns s + w·o as a new sparse vector with strictly increasing
// indices. Neither input is modified.
func (s Sparse) AddScaled(o Sparse, w float32) Sparse {
	n := len(s.Indices) + len(o.Indices)
	return AppendScaled(Sparse{Indices: make([]uint32, 0, n), Values: make([]float32, 0, n)}, s, o, w)
}

// AppendScaled appends the entries of s + w·o, which AddScaled returns, to
// dst's indices and values and returns the extended dst. Neither input is
// modified; dst must not overlap them.
func AppendScaled(dst, s, o Sparse, w float32) Sparse {
	out := dst
	i, j := 0, 0
	for i < len(s.Indices) || j < len(o.Indices) {
		switch {
		case j == len(o.Indices) || (i < len(s.Indices) && s.Indices[i] < o.Indices[j]):
			out.Indices, out.Values = append(out.Indices, s.Indices[i]), append(out.Values, s.Values[i])
			i++
		case i == len(s.Indices) || o.Indices[j] < s.Indices[i]:
			out.Indices, out.Values = append(out.Indices, o.Indices[j]), append(out.Values, w*o.Values[j])
			j++
		default:
			out.Indices, out.Values = append(out.Indices, s.Indices[i]), append(out.Values, s.Values[i]+w*o.Values[j])
			i++
			j++
		}
	}
	return out
}

// AddScaledDense returns a + w·b as a new dense vector; both must have the
// same length.
func AddScaledDense(a, b []float32, w float32) []float32 {
	out := make([]float32, len(a))
	for i := range a {
		out[i] = a[i] + w*b[i]
	}
	return out
}

// AddScaled returns v + w·o, field by field: sparse parts merge, dense parts
// add. A field missing on either side is taken from the side that has it
// (scaled by w when it comes from o).
func (v Vector) AddScaled(o Vector, w float32) Vector {
	var out Vector
	switch {
	case v.Sparse != nil && o.Sparse != nil:
		s := v.Sparse.AddScaled(*o.Sparse, w)
		out.Sparse = &s
	case v.Sparse != nil:
		out.Sparse = v.Sparse
	case o.Sparse != nil:
		s := Sparse{}.AddScaled(*o.Sparse, w)
		out.Sparse = &s
	}
	switch {
	case v.Dense != nil && o.Dense != nil:
		out.Dense = AddScaledDense(v.Dense, o.Dense, w)
	case v.Dense != nil:
		out.Dense = v.Dense
	case o.Dense != nil:
		out.Dense = AddScaledDense(make([]float32, len(o.Dense)), o.Dense, w)
	}
	return out
}
