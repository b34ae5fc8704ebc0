//go:build !amd64 || purego

package maxima

// Vector reports whether AddScaled and FirstAtLeast use
// vector instructions; here they are scalar loops.
const Vector = false

// AddScaled adds q times the bound each maximum of m stands for to
// ub (m holds at least len(ub)): ub[g] += q*Decoded(m[g], unit).
func AddScaled(ub []float32, m []uint8, unit, q float32) {
	addScaledScalar(ub, m, unit, q)
}

// AddFourScaled is AddScaled for four lists of maxima (each
// holding at least len(ub)), m[0]'s first.
func AddFourScaled(ub []float32, m *[4][]uint8, unit, q *[4]float32) {
	for i := range m {
		addScaledScalar(ub, m[i], unit[i], q[i])
	}
}

// FirstAtLeast returns the index of the first of ub[from:] at or above t,
// len(ub) when none is.
func FirstAtLeast(ub []float32, from int, t float32) int { return firstAtLeastScalar(ub, from, t) }

// AddScaledBits adds q times the float32 whose bits each of m holds to ub
// (m holds at least len(ub)) and zeroes those of m.
func AddScaledBits(ub []float32, m []uint32, q float32) { addScaledBitsScalar(ub, m, q) }
