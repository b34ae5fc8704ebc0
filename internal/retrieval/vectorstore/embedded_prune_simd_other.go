//go:build !amd64 || purego

package vectorstore

// vectorBounds reports whether addScaledMaxima and firstAtLeast use
// vector instructions; here they are scalar loops.
const vectorBounds = false

// addScaledMaxima adds q times each bfloat16 maximum of m to ub (m holds
// at least len(ub)): ub[g] += q*bf16(m[g]).
func addScaledMaxima(ub []float32, m []uint16, q float32) { addScaledMaximaScalar(ub, m, q) }

// firstAtLeast returns the index of the first of ub[from:] at or above t,
// len(ub) when none is.
func firstAtLeast(ub []float32, from int, t float32) int { return firstAtLeastScalar(ub, from, t) }
