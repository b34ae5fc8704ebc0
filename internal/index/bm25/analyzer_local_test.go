package bm25

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestLocalTableKeepsTermsInOrder tokenises random texts of tricky
// pieces, from none to a few dozen words, through a scratch (whose words
// are looked up in its local table) and without one, and checks that both
// give the same terms, hashes and word ends, in the same order.
func TestLocalTableKeepsTermsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var s AnalysisScratch
	for i := range 2000 {
		text := randomText(r, i%35)
		var wantEnds []int
		want := appendAnalyzed(nil, text, nil, &wantEnds)
		got := s.Tokenize(text)
		if len(want) == 0 {
			want, wantEnds = nil, nil
		}
		if len(got.terms) == 0 {
			got.terms, got.ends, got.hashes = nil, nil, nil
		}
		if !reflect.DeepEqual(got.terms, want) || !reflect.DeepEqual(got.ends, wantEnds) {
			t.Fatalf("text %q: terms %q ending at %v through the table, want %q ending at %v", text, got.terms, got.ends, want, wantEnds)
		}
		for k, term := range got.terms {
			if got.hashes[k] != termHash(term) {
				t.Fatalf("text %q: term %q has hash %x, want %x", text, term, got.hashes[k], termHash(term))
			}
		}
	}
}
