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

// firstAtLeast returns the index of the first of ub[from:] at or above t,
// len(ub) when none is.
func firstAtLeast(ub []float32, from int, t float32) int { return firstAtLeastScalar(ub, from, t) }
