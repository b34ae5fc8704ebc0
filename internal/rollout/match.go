package rollout

import (
	"slices"
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// hit reports whether results answer q: a returned parent comes from one
// of q.DocIDs, or its text contains one of q.Answers (both lowercased,
// white space runs made single spaces).
func (q GoldenQuery) hit(results []retrieve.Result) bool {
	answers := make([]string, len(q.Answers))
	for i, a := range q.Answers {
		answers[i] = normalize(a)
	}
	for _, r := range results {
		if slices.Contains(q.DocIDs, r.DocID) {
			return true
		}
		if len(answers) > 0 && containsAny(normalize(r.Text), answers) {
			return true
		}
	}
	return false
}

// containsAny reports whether text contains one of the non-empty subs.
func containsAny(text string, subs []string) bool {
	return slices.ContainsFunc(subs, func(s string) bool { return s != "" && strings.Contains(text, s) })
}

// normalize lowercases s and turns every run of white space into one
// space, trimming both ends.
func normalize(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
