package embed

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestLookaheadKeepsTermsInOrder tokenises random texts of tricky pieces,
// from none to a few times lookahead words, through a scratch (whose
// words wait in the queue) and without one (each word looked up as it
// ends), and checks that both give the same terms, hashes and word ends,
// in the same order, and that the queue is empty after each text.
func TestLookaheadKeepsTermsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var s AnalysisScratch
	for i := range 2000 {
		text := randomText(r, i%(4*lookahead+3))
		var wantEnds []int
		want := appendAnalyzed(nil, text, nil, &wantEnds)
		got := s.Tokenize(text)
		if s.stems.queue.n != 0 {
			t.Fatalf("text %q: %d words left in the queue", text, s.stems.queue.n)
		}
		if len(want) == 0 {
			want, wantEnds = nil, nil
		}
		if len(got.terms) == 0 {
			got.terms, got.ends, got.hashes = nil, nil, nil
		}
		if !reflect.DeepEqual(got.terms, want) || !reflect.DeepEqual(got.ends, wantEnds) {
			t.Fatalf("text %q: terms %q ending at %v through the queue, want %q ending at %v", text, got.terms, got.ends, want, wantEnds)
		}
		for k, term := range got.terms {
			if got.hashes[k] != TermHash(term) {
				t.Fatalf("text %q: term %q has hash %x, want %x", text, term, got.hashes[k], TermHash(term))
			}
		}
	}
}
