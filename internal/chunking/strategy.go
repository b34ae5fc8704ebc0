// Package chunking declares each chunking strategy once: its name as a
// ChunkingPolicy's spec.strategy spells it, and what the rest of parentrag
// must know of the units it makes. The API types, the builder that splits
// documents, the indexer, the bundle manifest and the evaluation all read
// these declarations. It depends on nothing but the standard library, so
// the API types can name the strategies without importing the core.
package chunking

import "slices"

// Strategy names how documents become parents and children, exactly as
// spec.strategy spells it.
type Strategy string

// The strategies. Each is declared in declarations below, and only there.
const (
	// ParentChild splits each document into parents and each parent into
	// children; children are searched and their parents returned.
	ParentChild Strategy = "ParentChild"
	// SentenceWindow makes every sentence a child whose parent is the
	// sentence with its neighbours on each side.
	SentenceWindow Strategy = "SentenceWindow"
)

// declaration is one strategy and what parentrag must know of it beyond
// how it splits a document.
type declaration struct {
	strategy Strategy
	// parentsOverlap says the parents of one document overlap by design
	// (the windows around neighbouring sentences share sentences), so a
	// retriever returns parents that overlap or abut once, as one.
	parentsOverlap bool
	// window says the parents are the sentences around each child, as
	// many on each side as spec.window says; other strategies ignore it.
	window bool
}

// declarations lists every strategy, the default (ParentChild) first.
var declarations = []declaration{
	{strategy: ParentChild},
	{strategy: SentenceWindow, parentsOverlap: true, window: true},
}

// Strategies returns every declared strategy, the default first, in a
// fresh slice.
func Strategies() []Strategy {
	out := make([]Strategy, len(declarations))
	for i, d := range declarations {
		out[i] = d.strategy
	}
	return out
}

// Declared reports whether s is a declared strategy.
func (s Strategy) Declared() bool {
	_, ok := s.declared()
	return ok
}

// ParentsOverlap reports whether the parents of one document overlap by
// design under s; false for a strategy that is not declared.
func (s Strategy) ParentsOverlap() bool {
	d, _ := s.declared()
	return d.parentsOverlap
}

// Window reports whether s makes the sentences around each child its
// parent and so reads spec.window; false for a strategy that is not
// declared.
func (s Strategy) Window() bool {
	d, _ := s.declared()
	return d.window
}

// declared returns the declaration of s, or ok false when s is not
// declared.
func (s Strategy) declared() (d declaration, ok bool) {
	i := slices.IndexFunc(declarations, func(d declaration) bool { return d.strategy == s })
	if i < 0 {
		return declaration{}, false
	}
	return declarations[i], true
}
