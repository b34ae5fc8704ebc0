package maxima

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// AddScaled (vector instructions where the processor has them) adds
// bit for bit what the scalar loop adds, for every length (whole vectors
// and tails), for units from the smallest float32 to the largest and for
// bounds and query weights from subnormal to infinite.
func TestAddScaledMaximaMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for n := range 70 {
		for range 20 {
			m := make([]uint8, n+r.IntN(3))
			for i := range m {
				m[i] = uint8(r.IntN(MaxCode + 1))
			}
			ub := make([]float32, n)
			for i := range ub {
				ub[i] = randomFloat(r)
			}
			unit, q := UnitFor(min(randomFloat(r), math.MaxFloat32)), randomFloat(r)
			got, want := slices.Clone(ub), slices.Clone(ub)
			AddScaled(got, m, unit, q)
			addScaledScalar(want, m, unit, q)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d unit=%g q=%g: group %d is %g, the scalar loop gives %g (vector: %v)", n, unit, q, i, got[i], want[i], Vector)
				}
			}
		}
	}
}

// AddScaledBits (vector instructions where the processor has them) adds
// bit for bit what the scalar loop adds and leaves every maximum zero, for
// every length and for bounds, maxima and query weights from subnormal to
// infinite.
func TestAddScaledBitsMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 17))
	for n := range 70 {
		for range 20 {
			m := make([]uint32, n+r.IntN(3))
			for i := range m {
				m[i] = math.Float32bits(randomFloat(r))
			}
			ub := make([]float32, n)
			for i := range ub {
				ub[i] = randomFloat(r)
			}
			q := randomFloat(r)
			got, want := slices.Clone(ub), slices.Clone(ub)
			gotM, wantM := slices.Clone(m), slices.Clone(m)
			AddScaledBits(got, gotM, q)
			addScaledBitsScalar(want, wantM, q)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d q=%g: group %d is %g, the scalar loop gives %g (vector: %v)", n, q, i, got[i], want[i], Vector)
				}
			}
			if !slices.Equal(gotM, wantM) || slices.ContainsFunc(gotM[:n], func(b uint32) bool { return b != 0 }) {
				t.Fatalf("n=%d: maxima left %v, want the first %d zero and the rest %v", n, gotM, n, wantM[n:])
			}
		}
	}
}

// AddFourScaled adds bit for bit what AddScaled's scalar loop
// adds for each of the four lists in turn, for every length.
func TestAddFourScaledMaximaMatchesOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 13))
	for n := range 70 {
		for range 20 {
			var m [4][]uint8
			var unit, q [4]float32
			for i := range m {
				m[i] = make([]uint8, n+r.IntN(3))
				for g := range m[i] {
					m[i][g] = uint8(r.IntN(MaxCode + 1))
				}
				unit[i], q[i] = UnitFor(min(randomFloat(r), math.MaxFloat32)), randomFloat(r)
			}
			ub := make([]float32, n)
			for i := range ub {
				ub[i] = randomFloat(r)
			}
			got, want := slices.Clone(ub), slices.Clone(ub)
			AddFourScaled(got, &m, &unit, &q)
			for i := range m {
				addScaledScalar(want, m[i], unit[i], q[i])
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d: group %d is %g, one list at a time gives %g (vector: %v)", n, i, got[i], want[i], Vector)
				}
			}
		}
	}
}

// randomFloat returns a non-negative float32 of any exponent, zero and
// +Inf now and then.
func randomFloat(r *rand.Rand) float32 {
	switch r.IntN(10) {
	case 0:
		return 0
	case 1:
		return float32(math.Inf(1))
	}
	return math.Float32frombits(r.Uint32() % 0x7f800000)
}

// FirstAtLeast finds what the scalar loop finds, from every start, for
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
		for _, th := range []float32{float32(math.Inf(-1)), 0, math.SmallestNonzeroFloat32, 5, 9.9, 10, float32(math.Inf(1))} {
			for from := 0; from <= n; from++ {
				if got, want := FirstAtLeast(ub, from, th), firstAtLeastScalar(ub, from, th); got != want {
					t.Fatalf("n=%d from=%d t=%g: got %d, the scalar loop finds %d (vector: %v)", n, from, th, got, want, Vector)
				}
			}
		}
	}
}
