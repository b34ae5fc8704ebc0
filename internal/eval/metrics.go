package eval

import (
	"math"
	"sort"
	"strings"
	"time"
)

// rankingScores are the ranking metrics of one query.
type rankingScores struct {
	ndcg10, recall100, hit1, hit5, mrr10 float64
}

// scoreRanking scores a ranked list of ids (duplicates already removed)
// against the relevant set, with binary gains.
func scoreRanking(ranked []string, relevant map[string]bool) rankingScores {
	var s rankingScores
	var dcg, found float64
	for i, id := range ranked {
		if !relevant[id] {
			continue
		}
		if i < 10 {
			dcg += 1 / math.Log2(float64(i)+2)
			if s.mrr10 == 0 {
				s.mrr10 = 1 / float64(i+1)
			}
		}
		if i < 100 {
			found++
		}
		if i < 1 {
			s.hit1 = 1
		}
		if i < 5 {
			s.hit5 = 1
		}
	}
	var idcg float64
	for i := range min(len(relevant), 10) {
		idcg += 1 / math.Log2(float64(i)+2)
	}
	if idcg > 0 {
		s.ndcg10 = dcg / idcg
	}
	if len(relevant) > 0 {
		s.recall100 = found / float64(len(relevant))
	}
	return s
}

// firstOccurrences removes repeated ids, keeping each id's first position.
func firstOccurrences(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// contextWords joins texts and keeps at most budget white-space separated
// words, normalising all white space to single spaces.
func contextWords(texts []string, budget int) string {
	var words []string
	for _, t := range texts {
		for _, w := range strings.Fields(t) {
			if len(words) == budget {
				return strings.Join(words, " ")
			}
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}

// containsAnswer reports whether any answer, with white space normalised,
// occurs in the context.
func containsAnswer(context string, answers []string) bool {
	for _, a := range answers {
		a = strings.Join(strings.Fields(a), " ")
		if a != "" && strings.Contains(context, a) {
			return true
		}
	}
	return false
}

// wordCount is the budget measure of the evaluation: white-space separated
// words.
func wordCount(s string) int { return len(strings.Fields(s)) }

// percentile returns the p-th percentile (0..100) of durations by the
// nearest-rank method, in milliseconds.
func percentile(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(p/100*float64(len(s)))) - 1
	rank = min(max(rank, 0), len(s)-1)
	return float64(s[rank].Microseconds()) / 1000
}
