package hierarchy

import (
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/chunking"
)

// Every declared strategy has its own way to split, and nothing splits
// for a strategy that is not declared.
func TestEveryDeclaredStrategyBuilds(t *testing.T) {
	for _, s := range chunking.Strategies() {
		if builds[s] == nil {
			t.Errorf("strategy %s is declared but the builder does not split with it", s)
		}
	}
	for s := range builds {
		if !s.Declared() {
			t.Errorf("the builder splits with %q, which package chunking does not declare", s)
		}
	}
}

// strategyBuilder returns a builder of strategy s over a parent splitter
// whose parents never overlap and windows of one sentence each side.
func strategyBuilder(t *testing.T, s chunking.Strategy) *Builder {
	t.Helper()
	b := parentChild(t, "r", 100, 0, 30, 0)
	b.Strategy, b.Window = s, 1
	return b
}

// parentsOverlap reports whether two parents of res share a code point.
func parentsOverlap(res Result) bool {
	for i, p := range res.Parents {
		for _, q := range res.Parents[i+1:] {
			if p.Start < q.Start+utf8.RuneCountInString(q.Text) && q.Start < p.Start+utf8.RuneCountInString(p.Text) {
				return true
			}
		}
	}
	return false
}

// What a strategy declares of its parents is what its builder makes:
// parents that overlap exactly when ParentsOverlap says so (with parents
// split without chunkOverlap).
func TestDeclaredOverlapIsWhatTheBuilderMakes(t *testing.T) {
	doc := Document{ID: "d", Text: paragraphs(4, 90, "Word. Other words here")}
	for _, s := range chunking.Strategies() {
		res := strategyBuilder(t, s).Build(doc)
		if len(res.Parents) < 3 {
			t.Fatalf("%s: %d parents, want several to compare", s, len(res.Parents))
		}
		if got, want := parentsOverlap(res), s.ParentsOverlap(); got != want {
			t.Errorf("%s: parents overlap %v, declared %v", s, got, want)
		}
	}
}

// A builder with no strategy, or one not declared, splits as ParentChild.
func TestUndeclaredStrategySplitsAsParentChild(t *testing.T) {
	doc := Document{ID: "d", Text: paragraphs(3, 90, "Word. Other words here")}
	want := strategyBuilder(t, chunking.ParentChild).Build(doc)
	for _, s := range []chunking.Strategy{"", "Semantic"} {
		if got := strategyBuilder(t, s).Build(doc); !reflect.DeepEqual(got, want) {
			t.Errorf("strategy %q splits otherwise than ParentChild", s)
		}
	}
}
