// Package maxima adds up bounds stored as one-byte maxima: a maximum is a
// whole number of its list's unit, a power of two chosen so that MaxCode
// units reach the list's largest weight, and stands for code times unit,
// exactly, never below the weight it bounds. AddScaled and FirstAtLeast
// use vector instructions where the processor has them (AVX2, eight
// floats at a time) and give, bit for bit, what their scalar loops give.
package maxima

import "math"

// MaxCode is the largest maximum, in units.
const MaxCode = 255

// UnitFor returns the smallest power of two u (at least the smallest
// float32, 2^-149) with MaxCode*u at or above top, a non-negative finite
// float32.
func UnitFor(top float32) float32 {
	u := math.Ldexp(1, -149)
	if need := float64(top) / MaxCode; need > u {
		frac, exp := math.Frexp(need) // need = frac * 2^exp, frac in [0.5, 1)
		u = math.Ldexp(1, exp)
		if frac == 0.5 {
			u /= 2
		}
	}
	if u*MaxCode < float64(top) {
		u *= 2
	}
	return float32(u)
}

// CodeOf returns the smallest number of units at or above m, which is at
// most MaxCode*unit: exact, since dividing by a power of two is.
func CodeOf(m, unit float32) uint8 {
	return uint8(math.Ceil(float64(m) / float64(unit)))
}

// Decoded widens a maximum to the float32 bound it stands for, exactly.
func Decoded(code uint8, unit float32) float32 { return float32(code) * unit }

// firstAtLeastScalar is FirstAtLeast one float at a time.
func firstAtLeastScalar(ub []float32, from int, t float32) int {
	for g := from; g < len(ub); g++ {
		if ub[g] >= t {
			return g
		}
	}
	return len(ub)
}

// addScaledScalar is AddScaled one maximum at a time.
func addScaledScalar(ub []float32, m []uint8, unit, q float32) {
	m = m[:len(ub)]
	for g, h := range m {
		ub[g] += q * Decoded(h, unit)
	}
}

// addScaledBitsScalar is AddScaledBits one float at a time.
func addScaledBitsScalar(ub []float32, m []uint32, q float32) {
	m = m[:len(ub)]
	for g, w := range m {
		ub[g] += q * math.Float32frombits(w)
		m[g] = 0
	}
}
