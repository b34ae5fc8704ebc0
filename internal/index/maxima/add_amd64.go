//go:build amd64 && !purego

package maxima

import "golang.org/x/sys/cpu"

// Vector reports whether AddScaled and FirstAtLeast use vector
// instructions (AVX2: eight groups per instruction), in which case adding
// one term at a time costs less than the scalar loop's grouping of terms.
var Vector = cpu.X86.HasAVX2

// AddScaled adds q times the bound each maximum of m stands for to
// ub (m holds at least len(ub)): ub[g] += q*Decoded(m[g], unit), each
// product rounded to float32 and then added, exactly as the scalar loop
// does.
func AddScaled(ub []float32, m []uint8, unit, q float32) {
	m = m[:len(ub)]
	n := len(ub) &^ 7
	if Vector && n > 0 {
		addScaledMaximaAVX2(&ub[0], &m[0], n, unit, q)
	} else {
		n = 0
	}
	addScaledScalar(ub[n:], m[n:], unit, q)
}

// addScaledMaximaAVX2 is AddScaled over the first n groups, n a
// multiple of 8, eight at a time (embedded_prune_simd_amd64.s).
//
//go:noescape
func addScaledMaximaAVX2(ub *float32, m *uint8, n int, unit, q float32)

// AddFourScaled is AddScaled for four lists of maxima (each
// holding at least len(ub)), m[0]'s first, in one pass over ub: the same
// sums, with each bound read and written once.
func AddFourScaled(ub []float32, m *[4][]uint8, unit, q *[4]float32) {
	n := len(ub) &^ 7
	if Vector && n > 0 {
		addFourScaledMaximaAVX2(&ub[0], &m[0][:n][0], &m[1][:n][0], &m[2][:n][0], &m[3][:n][0], n, unit, q)
	} else {
		n = 0
	}
	for i := range m {
		addScaledScalar(ub[n:], m[i][n:], unit[i], q[i])
	}
}

// addFourScaledMaximaAVX2 is AddFourScaled over the first n groups,
// n a multiple of 8, eight at a time (embedded_prune_simd_amd64.s).
//
//go:noescape
func addFourScaledMaximaAVX2(ub *float32, m0, m1, m2, m3 *uint8, n int, unit, q *[4]float32)

// FirstAtLeast returns the index of the first of ub[from:] at or above t
// (from when it is), len(ub) when none is.
func FirstAtLeast(ub []float32, from int, t float32) int {
	if Vector {
		rest := ub[from:]
		if n := len(rest) &^ 7; n > 0 {
			if i := firstAtLeastAVX2(&rest[0], n, t); i < n {
				return from + i
			}
			from += n
		}
	}
	return firstAtLeastScalar(ub, from, t)
}

// firstAtLeastAVX2 is FirstAtLeast over n floats from ub, n a multiple of
// 8, eight at a time; n when none is at or above t.
//
//go:noescape
func firstAtLeastAVX2(ub *float32, n int, t float32) int

// AddScaledBits adds q times the float32 whose bits each of m holds to ub
// (m holds at least len(ub)) and zeroes those of m: ub[g] +=
// q*math.Float32frombits(m[g]), each product rounded to float32 and then
// added, exactly as the scalar loop does.
func AddScaledBits(ub []float32, m []uint32, q float32) {
	m = m[:len(ub)]
	n := len(ub) &^ 7
	if Vector && n > 0 {
		addScaledBitsAVX2(&ub[0], &m[0], n, q)
	} else {
		n = 0
	}
	addScaledBitsScalar(ub[n:], m[n:], q)
}

// addScaledBitsAVX2 is AddScaledBits over the first n groups, n a multiple
// of 8, eight at a time (embedded_prune_simd_amd64.s).
//
//go:noescape
func addScaledBitsAVX2(ub *float32, m *uint32, n int, q float32)
