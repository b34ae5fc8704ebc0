package segment

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/index/bm25"
)

// TestRecentTermsHoldOneParentsTerms checks that recentTerms finds each
// term put since its last reset, by its bytes whatever string holds them,
// and none put before that reset, also after its stamp wraps.
func TestRecentTermsHoldOneParentsTerms(t *testing.T) {
	var r recentTerms
	for round, n := range []int{700, 300, 300} { // the second round reuses the first's table
		if round == 2 {
			r.stamp = ^uint32(0) // the next reset wraps
		}
		terms := make([]string, n)
		r.reset(len(terms))
		for i := range terms {
			terms[i] = fmt.Sprintf("term%d-%d", round, i)
			r.put(terms[i], bm25.TermHash(terms[i]), i)
		}
		for i, term := range terms {
			again := strings.Clone(term)
			if k, ok := r.get(again, bm25.TermHash(again)); !ok || k != i {
				t.Fatalf("round %d: get(%q) = %d, %v; want %d", round, term, k, ok, i)
			}
		}
		if round > 0 {
			old := fmt.Sprintf("term%d-%d", round-1, 0)
			if k, ok := r.get(old, bm25.TermHash(old)); ok {
				t.Fatalf("round %d: a term of the round before found at %d", round, k)
			}
		}
	}
}

// TestWriterTermsFindEveryTerm checks that the writer's table gives each
// of many terms, long and short, the index it was first given, as it
// grows, whether a term comes again as the same string or as a copy.
func TestWriterTermsFindEveryTerm(t *testing.T) {
	w := NewWriter(false)
	var terms []string
	for i := range 5000 {
		term := fmt.Sprintf("t%d", i)
		if i%7 == 0 {
			term += strings.Repeat("x", 40)
		}
		terms = append(terms, term)
		if k := w.term(term, bm25.TermHash(term)); k != i {
			t.Fatalf("new term %q got index %d, want %d", term, k, i)
		}
	}
	for round := range 2 {
		for i, term := range terms {
			if round == 0 {
				term = strings.Clone(term)
			}
			if k := w.term(term, bm25.TermHash(term)); k != i {
				t.Fatalf("round %d: term %q found at %d, want %d", round, term, k, i)
			}
		}
	}
	if len(w.names) != len(terms) {
		t.Fatalf("%d names for %d terms", len(w.names), len(terms))
	}
}
