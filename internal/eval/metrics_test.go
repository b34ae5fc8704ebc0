package eval

import (
	"math"
	"testing"
	"time"
)

func TestScoreRanking(t *testing.T) {
	rel := map[string]bool{"b": true, "z": true}
	s := scoreRanking([]string{"a", "b", "c"}, rel)
	wantNDCG := (1 / math.Log2(3)) / (1 + 1/math.Log2(3))
	if math.Abs(s.ndcg10-wantNDCG) > 1e-9 || s.hit1 != 0 || s.hit5 != 1 || s.mrr10 != 0.5 || s.recall100 != 0.5 {
		t.Fatalf("scoreRanking = %+v, want ndcg %.4f hit1 0 hit5 1 mrr 0.5 recall 0.5", s, wantNDCG)
	}
	if s := scoreRanking([]string{"b"}, map[string]bool{"b": true}); s.ndcg10 != 1 || s.hit1 != 1 {
		t.Fatalf("perfect ranking scored %+v", s)
	}
	if s := scoreRanking(nil, rel); s != (rankingScores{}) {
		t.Fatalf("empty ranking scored %+v", s)
	}
}

func TestContextWordsAndAnswers(t *testing.T) {
	ctx := contextWords([]string{"Denver  Broncos won\nthe", "Super Bowl 50 in 2016"}, 5)
	if ctx != "Denver Broncos won the Super" {
		t.Fatalf("contextWords = %q", ctx)
	}
	if !containsAnswer(ctx, []string{"nothing", "Broncos won"}) {
		t.Fatal("answer present but not found")
	}
	if containsAnswer(ctx, []string{"Bowl 50"}) {
		t.Fatal("answer beyond the budget was found")
	}
}

func TestPercentileAndFirstOccurrences(t *testing.T) {
	d := []time.Duration{4 * time.Millisecond, time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}
	if p := percentile(d, 50); p != 2 {
		t.Fatalf("p50 = %v, want 2", p)
	}
	if p := percentile(d, 99); p != 4 {
		t.Fatalf("p99 = %v, want 4", p)
	}
	got := firstOccurrences([]string{"a", "b", "a", "c", "b"})
	if len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Fatalf("firstOccurrences = %v", got)
	}
}

func TestLocateParagraphs(t *testing.T) {
	paras, err := locateParagraphs("één\n\ntwo", []string{"0-0", "0-1"})
	if err != nil {
		t.Fatal(err)
	}
	if paras[0] != (paragraph{"0-0", 0, 3}) || paras[1] != (paragraph{"0-1", 5, 8}) {
		t.Fatalf("paragraphs = %+v", paras)
	}
	if _, err := locateParagraphs("one", []string{"a", "b"}); err == nil {
		t.Fatal("count mismatch accepted")
	}
}
