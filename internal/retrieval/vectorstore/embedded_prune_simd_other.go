//go:build !amd64 || purego

package vectorstore

// vectorBounds reports whether addScaledMaxima and firstAtLeast use
// vector instructions; here they are scalar loops.
const vectorBounds = false

// addScaledMaxima adds q times the bound each maximum of m stands for to
// ub (m holds at least len(ub)): ub[g] += q*decoded(m[g], unit).
func addScaledMaxima(ub []float32, m []uint8, unit, q float32) {
	addScaledMaximaScalar(ub, m, unit, q)
}

// addFourScaledMaxima is addScaledMaxima for four lists of maxima (each
// holding at least len(ub)), m[0]'s first.
func addFourScaledMaxima(ub []float32, m *[4][]uint8, unit, q *[4]float32) {
	for i := range m {
		addScaledMaximaScalar(ub, m[i], unit[i], q[i])
	}
}

// firstAtLeast returns the index of the first of ub[from:] at or above t,
// len(ub) when none is.
func firstAtLeast(ub []float32, from int, t float32) int { return firstAtLeastScalar(ub, from, t) }

// addScaledBits adds q times the float32 whose bits each of m holds to ub
// (m holds at least len(ub)) and zeroes those of m.
func addScaledBits(ub []float32, m []uint32, q float32) { addScaledBitsScalar(ub, m, q) }
