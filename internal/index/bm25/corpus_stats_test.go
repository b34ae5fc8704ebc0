package bm25

import (
	"context"
	"reflect"
	"testing"
)

// Analyses turned into ids by CorpusStats and then into vocabulary ids
// embed, bit for bit, as EmbedDocuments embeds their texts, both the
// texts counted (children) and those only interned (contexts, whose
// terms the corpus lacks are dropped); the statistics are those Fit
// computes.
func TestCorpusStatsIDsEmbedAsTheTexts(t *testing.T) {
	texts := syntheticTexts(300, 40, 11)
	counted, interned := texts[:200], append(texts[200:], "zebra quagga okapi, words no child holds")
	var s AnalysisScratch
	stats := NewCorpusStats()
	ids := map[int][]uint32{}
	for i, text := range append(append([]string{}, counted...), interned...) {
		a := s.AnalyzeCounts(text)
		if i < len(counted) {
			ids[i] = stats.Add(a, nil)
		} else {
			ids[i] = stats.Intern(a, nil)
		}
	}
	if _, ok := stats.VocabularyID(0); ok {
		t.Fatal("VocabularyID answered before FitCorpus")
	}
	fromStats, fromTexts := mustLexical(t), mustLexical(t)
	if err := fromStats.FitCorpus(stats); err != nil {
		t.Fatal(err)
	}
	if err := fromTexts.Fit(counted); err != nil {
		t.Fatal(err)
	}
	a, b := mustMarshal(t, fromStats), mustMarshal(t, fromTexts)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("FitCorpus statistics differ from Fit's")
	}
	all := append(append([]string{}, counted...), interned...)
	want, err := fromTexts.EmbedDocuments(context.Background(), all)
	if err != nil {
		t.Fatal(err)
	}
	dropped := 0
	for i, text := range all {
		full := s.AnalyzeCounts(text)
		a := Analysis{Tokens: full.Tokens, IDs: []uint32{}, Counts: []uint32{}}
		for j, id := range ids[i] {
			if v, ok := stats.VocabularyID(id); ok {
				a.IDs, a.Counts = append(a.IDs, v), append(a.Counts, full.Counts[j])
			} else {
				dropped++
			}
		}
		got, err := fromTexts.EmbedAnalysis(&a, &s)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Indices, want[i].Sparse.Indices) || !reflect.DeepEqual(got.Values, want[i].Sparse.Values) {
			t.Fatalf("text %d: embedded from ids %+v, want %+v", i, got, want[i].Sparse)
		}
	}
	if dropped == 0 {
		t.Fatal("no interned term was left out of the vocabulary: the test proves nothing about them")
	}
	if _, err := fromTexts.EmbedAnalysis(&Analysis{IDs: []uint32{1 << 30}, Counts: []uint32{1}, Tokens: 1}, &s); err == nil {
		t.Fatal("an id beyond the vocabulary was embedded")
	}
}

// mustLexical returns an unfitted embedder with the default parameters.
func mustLexical(t *testing.T) *Lexical {
	t.Helper()
	l, err := NewLexical(DefaultK1, DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// mustMarshal returns l's serialised statistics.
func mustMarshal(t *testing.T, l *Lexical) []byte {
	t.Helper()
	b, err := l.MarshalStats()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAddCountsCountsAsCount checks that counting texts from a summary of
// them gives the statistics counting each text gives, and that a summary
// that cannot be one is refused.
func TestAddCountsCountsAsCount(t *testing.T) {
	texts := []string{"hotels near the station", "station meals", "meals and hotels"}
	each := NewCorpusStats()
	var scratch AnalysisScratch
	df := map[string]uint32{}
	tokens := uint64(0)
	for _, text := range texts {
		a := scratch.AnalyzeCounts(text)
		each.Count(a)
		tokens += uint64(a.Tokens)
		for _, term := range a.Terms {
			df[term]++
		}
	}
	summed := NewCorpusStats()
	var terms []string
	var dfs []uint32
	for term, n := range df {
		terms, dfs = append(terms, term), append(dfs, n)
	}
	if err := summed.AddCounts(len(texts), tokens, terms, dfs); err != nil {
		t.Fatal(err)
	}
	fitted := func(c *CorpusStats) []byte {
		l, err := NewLexical(DefaultK1, DefaultB)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.FitCorpus(c); err != nil {
			t.Fatal(err)
		}
		b, err := l.MarshalStats()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if string(fitted(summed)) != string(fitted(each)) {
		t.Fatal("statistics summed from counts differ from counting each text")
	}
	if err := NewCorpusStats().AddCounts(1, 3, []string{"hotel"}, []uint32{2}); err == nil {
		t.Fatal("a term in more texts than there are was accepted")
	}
	if err := NewCorpusStats().AddCounts(1, 3, []string{"hotel"}, nil); err == nil {
		t.Fatal("terms without frequencies were accepted")
	}
}
