package indexer

import (
	"context"
	"sync"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// unitSource makes or loads the unit of each document of a build.
type unitSource struct {
	docs  []hierarchy.Document
	split hierarchy.DocumentSplitter
	shape unitShape
	cache *UnitCache
	scope []byte
}

// newUnitSource readies the units of docs, kept in opts.Units when set.
func newUnitSource(docs []hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, opts Options) *unitSource {
	s := &unitSource{docs: docs, split: b, shape: shape, cache: opts.Units}
	if s.cache != nil {
		s.scope = unitScope(shape, opts.UnitScope)
	}
	return s
}

// unitsOf is the first pass of a build: it returns the unit of every
// document, in document order, made or loaded by a bounded pool of
// workers, how many came from the cache, and the corpus statistics of
// their child texts. Each unit's analyses are packed once counted
// (restore unpacks them), so the pass holds them at a third of their
// size. Each unit done reports the documents done and reused so far.
func (s *unitSource) unitsOf(ctx context.Context, opts Options) ([]*Unit, int, *embed.CorpusStats, error) {
	units := make([]*Unit, len(s.docs))
	next := make(chan int)
	type outcome struct {
		i      int
		reused bool
	}
	done := make(chan outcome, len(s.docs))
	var wg sync.WaitGroup
	for range min(opts.Workers, max(len(s.docs), 1)) {
		wg.Go(func() {
			var scratch embed.AnalysisScratch
			for i := range next {
				o := outcome{i: i}
				units[i], o.reused = s.unit(i, &scratch)
				done <- o
			}
		})
	}
	go func() {
		defer close(next)
		for i := range s.docs {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	stats := embed.NewCorpusStats()
	reused := 0
	for n := range s.docs {
		select {
		case o := <-done:
			if o.reused {
				reused++
			}
			s.count(units[o.i], stats)
			opts.OnProgress(Progress{Stage: StageSplit, Done: n + 1, Total: len(s.docs), Reused: reused})
		case <-ctx.Done():
			wg.Wait()
			return nil, 0, nil, ctx.Err()
		}
	}
	wg.Wait()
	return units, reused, stats, nil
}

// count adds the child texts of u to stats and packs u's analyses until
// the second pass needs them.
func (s *unitSource) count(u *Unit, stats *embed.CorpusStats) {
	for i := range u.ChildTerms {
		stats.Add(u.ChildTerms[i])
	}
	u.packedAnalyses()
	u.ChildTerms, u.ContextTerms = nil, nil
}

// unit returns the i-th document's unit from the cache when it holds it,
// and otherwise makes it and, with a cache, queues it to be stored; it
// reports whether the unit came from the cache.
func (s *unitSource) unit(i int, scratch *embed.AnalysisScratch) (*Unit, bool) {
	doc := s.docs[i]
	if s.cache == nil {
		return newUnit(doc, s.split, s.shape, scratch), false
	}
	key := keyOf(s.scope, doc)
	if u, ok := s.cache.load(key); ok {
		return u, true
	}
	u := newUnit(doc, s.split, s.shape, scratch)
	s.cache.store(key, u)
	return u, false
}

// restore gives the i-th document's unit u back the analyses the first
// pass packed. Packed analyses that do not decode (which a build never
// writes) are made again from the document, which yields the same.
func (s *unitSource) restore(i int, u *Unit, scratch *embed.AnalysisScratch) {
	packed := u.packed
	u.packed = nil
	if !s.shape.analysed || decodeAnalyses(packed, u) == nil {
		return
	}
	full := newUnit(s.docs[i], s.split, s.shape, scratch)
	u.ChildTerms, u.ContextTerms = full.ChildTerms, full.ContextTerms
}
