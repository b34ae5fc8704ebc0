package rollout

import (
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

func TestGoldenQueryHit(t *testing.T) {
	results := []retrieve.Result{
		{ParentID: "p1", DocID: "garden.md", Text: "Tomatoes need full sun."},
		{ParentID: "p2", DocID: "sailing.txt", Text: "A reef in the\n  Mainsail reduces heeling."},
	}
	tests := []struct {
		name string
		q    GoldenQuery
		want bool
	}{
		{"document of the first parent", GoldenQuery{DocIDs: []string{"garden.md"}}, true},
		{"document of a later parent", GoldenQuery{DocIDs: []string{"x.md", "sailing.txt"}}, true},
		{"document not returned", GoldenQuery{DocIDs: []string{"bread.md"}}, false},
		{"document ids are exact", GoldenQuery{DocIDs: []string{"Garden.md"}}, false},
		{"answer across case and white space", GoldenQuery{Answers: []string{" REEF in the mainsail "}}, true},
		{"answer not in any text", GoldenQuery{Answers: []string{"jib sheet"}}, false},
		{"answer spanning two parents", GoldenQuery{Answers: []string{"sun. a reef"}}, false},
		{"either kind of expectation", GoldenQuery{DocIDs: []string{"bread.md"}, Answers: []string{"full sun"}}, true},
	}
	for _, tc := range tests {
		if got := tc.q.hit(results); got != tc.want {
			t.Errorf("%s: hit = %v, want %v", tc.name, got, tc.want)
		}
		if tc.q.hit(nil) {
			t.Errorf("%s: hit without results", tc.name)
		}
	}
}
