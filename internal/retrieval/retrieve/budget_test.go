package retrieve

import (
	"reflect"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

func TestAddInterval(t *testing.T) {
	tests := []struct {
		list []Interval
		add  Interval
		want []Interval
	}{
		{nil, Interval{2, 4}, []Interval{{2, 4}}},
		{[]Interval{{0, 2}, {8, 9}}, Interval{4, 5}, []Interval{{0, 2}, {4, 5}, {8, 9}}},
		{[]Interval{{0, 2}, {8, 9}}, Interval{1, 8}, []Interval{{0, 9}}},
		{[]Interval{{0, 2}}, Interval{2, 3}, []Interval{{0, 3}}},
		{[]Interval{{5, 6}}, Interval{0, 1}, []Interval{{0, 1}, {5, 6}}},
	}
	for _, tt := range tests {
		before := append([]Interval(nil), tt.list...)
		if got := addInterval(tt.list, tt.add); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("addInterval(%v, %v) = %v, want %v", tt.list, tt.add, got, tt.want)
		}
		if !reflect.DeepEqual(before, tt.list) {
			t.Errorf("addInterval modified its input")
		}
	}
}

func TestSnapToWords(t *testing.T) {
	runes := []rune("alpha beta gamma delta")
	tests := []struct {
		in, want Interval
	}{
		{Interval{0, 22}, Interval{0, 22}},
		{Interval{2, 15}, Interval{6, 10}}, // "pha beta gamm" -> "beta"
		{Interval{5, 11}, Interval{6, 10}}, // spaces trimmed
		{Interval{7, 9}, Interval{9, 9}},   // inside one word: empty
		{Interval{11, 22}, Interval{11, 22}},
	}
	for _, tt := range tests {
		if got := snapToWords(runes, tt.in); got != tt.want {
			t.Errorf("snapToWords(%v) = %v (%q), want %v", tt.in, got, string(runes[got.Start:got.End]), tt.want)
		}
	}
}

// words counts white-space separated words, the budget unit of the tests.
func words(s string) int { return len(strings.Fields(s)) }

func budgetFixture() ([]group, []hierarchy.Parent) {
	p1 := hierarchy.Parent{ID: "p1", DocID: "d", Text: "one two three four five six seven eight nine ten",
		Children: []hierarchy.Span{{ID: "c1", Start: 0, End: 13}, {ID: "c2", Start: 28, End: 39}}}
	p2 := hierarchy.Parent{ID: "p2", DocID: "d", Text: "alpha beta gamma delta epsilon",
		Children: []hierarchy.Span{{ID: "c3", Start: 11, End: 22}}}
	groups := []group{
		{parentID: "p1", docID: "d", score: 3, hits: []index.Hit{{ID: "c2", ParentID: "p1", Score: 3}, {ID: "c1", ParentID: "p1", Score: 1}}},
		{parentID: "p2", docID: "d", score: 2, hits: []index.Hit{{ID: "c3", ParentID: "p2", Score: 2}}},
	}
	return groups, []hierarchy.Parent{p1, p2}
}

func TestAssembleWithoutBudgetReturnsWholeParents(t *testing.T) {
	groups, parents := budgetFixture()
	got := assemble(groups, parents, Options{}.withDefaults())
	if len(got) != 2 || got[0].Text != parents[0].Text || got[1].Text != parents[1].Text || got[0].Trimmed {
		t.Fatalf("assemble = %+v", got)
	}
	if got[0].Matches[0].ChildID != "c2" || got[0].Matches[0].Start != 28 {
		t.Fatalf("matches = %+v", got[0].Matches)
	}
}

func TestAssembleBudget(t *testing.T) {
	tests := []struct {
		budget int
		want   []string
	}{
		// The best child alone ("seven eight") fits, then it grows in place.
		{2, []string{"seven eight"}},
		{3, []string{"six seven eight"}},
		// p1's weaker child would overflow (the ellipsis counts as a word), so
		// p1 is padded around its best child with what is left.
		{7, []string{"six seven eight nine", "gamma delta"}},
		// Every hit child fits; nothing more does.
		{8, []string{"one two three … seven eight", "gamma delta"}},
		// p1 fits whole; p2 grows around its hit with what is left.
		{13, []string{"one two three four five six seven eight nine ten", "beta gamma delta"}},
		{100, []string{"one two three four five six seven eight nine ten", "alpha beta gamma delta epsilon"}},
	}
	for _, tt := range tests {
		groups, parents := budgetFixture()
		got := assemble(groups, parents, Options{Budget: tt.budget, Length: words}.withDefaults())
		var texts []string
		total := 0
		for _, r := range got {
			texts = append(texts, r.Text)
			total += words(r.Text)
		}
		if !reflect.DeepEqual(texts, tt.want) {
			t.Errorf("budget %d: texts %q, want %q", tt.budget, texts, tt.want)
		}
		if total > tt.budget {
			t.Errorf("budget %d exceeded: %d", tt.budget, total)
		}
	}
}

func TestAssembleBudgetInCodePoints(t *testing.T) {
	groups, parents := budgetFixture()
	got := assemble(groups, parents, Options{Budget: 20, Length: split.CodePoints}.withDefaults())
	total := 0
	for _, r := range got {
		total += split.CodePoints(r.Text)
		if !r.Trimmed && r.Text != parents[0].Text && r.Text != parents[1].Text {
			t.Fatalf("untrimmed result %q is not a parent", r.Text)
		}
	}
	if total > 20 || total == 0 {
		t.Fatalf("total %d code points for budget 20: %+v", total, got)
	}
}

func TestGroupHitsAggregation(t *testing.T) {
	hits := []index.Hit{
		{ID: "a", ParentID: "p1", Score: 5},
		{ID: "b", ParentID: "p2", Score: 4},
		{ID: "c", ParentID: "p2", Score: 4},
		{ID: "d", ParentID: "p1", Score: 1},
	}
	tests := []struct {
		agg   Aggregation
		order []string
		score []float32
	}{
		{AggregateMax, []string{"p1", "p2"}, []float32{5, 4}},
		{AggregateSum, []string{"p2", "p1"}, []float32{8, 6}},
		{AggregateMean, []string{"p2", "p1"}, []float32{4, 3}},
	}
	for _, tt := range tests {
		groups := groupHits(hits, tt.agg)
		for i, g := range groups {
			if g.parentID != tt.order[i] || g.score != tt.score[i] {
				t.Errorf("%s: group %d = %s %.1f, want %s %.1f", tt.agg, i, g.parentID, g.score, tt.order[i], tt.score[i])
			}
		}
	}
}
