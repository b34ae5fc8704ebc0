package segment

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWithGroupsBoundsAndCarries checks that a normal bound carrying its
// groups is no smaller than the bound, looser by less than 2⁻¹⁵ of it,
// and gives its groups back.
func TestWithGroupsBoundsAndCarries(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		bound := math.Float32frombits(0x00800000 + rng.Uint32N(0x7F000000-0x00800000)) // normal, finite, positive
		groups := uint8(rng.UintN(256))
		got := withGroups(bound, groups)
		if got < bound || float64(got)-float64(bound) >= float64(bound)*0x1p-15 {
			t.Fatalf("withGroups(%v, %08b) = %v", bound, groups, got)
		}
		if groupsOf(got) != groups {
			t.Fatalf("withGroups(%v, %08b) carries %08b", bound, groups, groupsOf(got))
		}
	}
}
