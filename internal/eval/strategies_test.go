package eval

import (
	"slices"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// The evaluated names of the declared chunking strategies, as the tests
// ask for them.
var (
	ParentChild    = nameOf(chunking.ParentChild)
	SentenceWindow = nameOf(chunking.SentenceWindow)
)

// The names reports and --strategy use keep their spelling.
func TestStrategyNamesKeepTheirSpelling(t *testing.T) {
	for s, want := range map[chunking.Strategy]string{
		chunking.ParentChild: "parent-child", chunking.SentenceWindow: "sentence-window",
	} {
		if got := nameOf(s); got != want {
			t.Errorf("nameOf(%s) = %q, want %q", s, got, want)
		}
	}
}

// Every declared chunking strategy is evaluated, split by a builder of
// that strategy; every listed strategy has a splitter, under one name.
func TestEveryDeclaredStrategyIsEvaluated(t *testing.T) {
	b := &hierarchy.Builder{Strategy: chunking.SentenceWindow, Window: 1}
	for _, s := range chunking.Strategies() {
		if !slices.Contains(AllStrategies, nameOf(s)) {
			t.Errorf("strategy %s is declared but not evaluated (as %q)", s, nameOf(s))
		}
		splitter, err := splitterFor(nameOf(s), b)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := splitter.(*hierarchy.Builder); !ok || got.Strategy != s {
			t.Errorf("%s is evaluated with %#v, want a builder of that strategy", nameOf(s), splitter)
		}
	}
	for i, name := range AllStrategies {
		if slices.Contains(AllStrategies[:i], name) {
			t.Errorf("%q is listed twice in %v", name, AllStrategies)
		}
		if _, err := splitterFor(name, b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, builderOf := range map[string]func(hierarchy.DocumentSplitter) *hierarchy.Builder{
		Adaptive:   func(s hierarchy.DocumentSplitter) *hierarchy.Builder { return s.(*hierarchy.Builder) },
		FlatChild:  func(s hierarchy.DocumentSplitter) *hierarchy.Builder { return s.(hierarchy.FlatChildren).Builder },
		FlatParent: func(s hierarchy.DocumentSplitter) *hierarchy.Builder { return s.(hierarchy.FlatParents).Builder },
	} {
		splitter, _ := splitterFor(name, b)
		if got := builderOf(splitter).Strategy; got != chunking.ParentChild {
			t.Errorf("%s splits with %s, want ParentChild", name, got)
		}
	}
	if b.Strategy != chunking.SentenceWindow {
		t.Errorf("choosing a splitter changed the policy's builder to %s", b.Strategy)
	}
	if _, err := splitterFor("ParentChild", b); err == nil || !strings.Contains(err.Error(), strings.Join(AllStrategies, ", ")) {
		t.Errorf("an unknown strategy: error %v, want one listing %v", err, AllStrategies)
	}
}
