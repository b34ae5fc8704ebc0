package embed

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// naiveCounts is AnalyzeCounts written plainly, with a map.
func naiveCounts(text string) Analysis {
	toks := Analyze(text)
	a := Analysis{Tokens: len(toks)}
	index := map[string]int{}
	for _, t := range toks {
		i, ok := index[t]
		if !ok {
			i = len(a.Terms)
			index[t] = i
			a.Terms = append(a.Terms, t)
			a.Counts = append(a.Counts, 0)
		}
		a.Counts[i]++
	}
	return a
}

// One scratch analyses texts of every size in turn, long ones growing its
// table and short ones reusing it, and counts each exactly as a map does.
func TestAnalyzeCountsMatchesAMap(t *testing.T) {
	var long strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&long, "word%d running runs %d ", i%701, i%13)
	}
	texts := []string{"", "the and of", "Alice's cats ran; the cat runs. Cats!", long.String(), "one two two three three three", long.String()[:4000], "x"}
	var s AnalysisScratch
	for i, text := range texts {
		got, want := s.AnalyzeCounts(text), naiveCounts(text)
		if len(want.Terms) == 0 {
			want.Terms, want.Counts = []string{}, []uint32{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("text %d: AnalyzeCounts = %+v, want %+v", i, got, want)
		}
	}
}
