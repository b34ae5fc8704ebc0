package vectorstore

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// addScaledMaxima (vector instructions where the processor has them) adds
// bit for bit what the scalar loop adds, for every length (whole vectors
// and tails) and for maxima from subnormal to infinite.
func TestAddScaledMaximaMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for n := range 70 {
		for range 20 {
			m := make([]uint16, n+r.IntN(3))
			for i := range m {
				m[i] = randomMaximum(r)
			}
			ub := make([]float32, n)
			for i := range ub {
				ub[i] = math.Float32frombits(uint32(randomMaximum(r))<<16 | r.Uint32()&0xffff)
			}
			q := math.Float32frombits(uint32(randomMaximum(r))<<16 | r.Uint32()&0xffff)
			got, want := slices.Clone(ub), slices.Clone(ub)
			addScaledMaxima(got, m, q)
			addScaledMaximaScalar(want, m, q)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d q=%g: group %d is %g, the scalar loop gives %g (vector: %v)", n, q, i, got[i], want[i], vectorBounds)
				}
			}
		}
	}
}

// randomMaximum returns a non-negative bfloat16 of any exponent, zero and
// +Inf now and then.
func randomMaximum(r *rand.Rand) uint16 {
	switch r.IntN(10) {
	case 0:
		return 0
	case 1:
		return 0x7f80 // +Inf
	}
	return uint16(r.IntN(0x7f80))
}

// firstAtLeast finds what the scalar loop finds, from every start, for
// thresholds below, between and above the bounds, NaNs among them.
func TestFirstAtLeastMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for n := range 70 {
		ub := make([]float32, n)
		for i := range ub {
			switch r.IntN(8) {
			case 0:
				ub[i] = float32(math.NaN())
			case 1:
				ub[i] = 0
			default:
				ub[i] = r.Float32() * 10
			}
		}
		for _, th := range []float32{float32(math.Inf(-1)), 0, above(0), 5, 9.9, 10, float32(math.Inf(1))} {
			for from := 0; from <= n; from++ {
				if got, want := firstAtLeast(ub, from, th), firstAtLeastScalar(ub, from, th); got != want {
					t.Fatalf("n=%d from=%d t=%g: got %d, the scalar loop finds %d (vector: %v)", n, from, th, got, want, vectorBounds)
				}
			}
		}
	}
}
