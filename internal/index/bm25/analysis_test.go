package bm25

import (
	"context"
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

// One scratch embeds analyses before and after the embedder is fitted on
// another corpus, with other ids for the same terms, and gets each time
// what EmbedDocuments gives for the texts.
func TestEmbedAnalysisScratchSurvivesRefit(t *testing.T) {
	texts := syntheticTexts(300, 40, 7)
	l, err := NewLexical(DefaultK1, DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	var s AnalysisScratch
	for round, corpus := range [][]string{texts[:100], texts[150:], texts[:100]} {
		if err := l.Fit(corpus); err != nil {
			t.Fatal(err)
		}
		want, err := l.EmbedDocuments(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range texts {
			a := s.AnalyzeCounts(text)
			got, err := l.EmbedAnalysis(&a, &s)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want[i].Sparse) {
				t.Fatalf("round %d, text %d: EmbedAnalysis = %+v, want %+v", round, i, got, want[i].Sparse)
			}
		}
	}
}
