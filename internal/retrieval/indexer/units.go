package indexer

import (
	"context"
	"fmt"
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
	spill *unitSpill // nil: units stay in memory between the passes
	stats *embed.CorpusStats
}

// newUnitSource readies the units of docs, kept in opts.Units when set
// and spilled to opts.SpillDir when set, counting their child texts into
// corpus statistics of their own; close releases the spill.
func newUnitSource(docs []hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, opts Options) (*unitSource, error) {
	s := &unitSource{docs: docs, split: b, shape: shape, cache: opts.Units, stats: embed.NewCorpusStats()}
	if s.cache != nil {
		s.scope = unitScope(shape, opts.UnitScope)
	}
	if opts.SpillDir != "" {
		var err error
		if s.spill, err = newUnitSpill(opts.SpillDir, len(docs), s.stats); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// close removes the spill, when the build has one.
func (s *unitSource) close() {
	if s.spill != nil {
		s.spill.close()
	}
}

// firstPass is what the first pass of a build leaves: every unit in
// document order (none when the build spills them), how many came from
// the cache, the corpus statistics of their child texts and how many
// parents and children they hold.
type firstPass struct {
	units             []*Unit
	reused            int
	stats             *embed.CorpusStats
	parents, children int
}

// made is a unit a worker of the first pass hands on: the i-th document's,
// the split field of its payload when the build spills units, and whether
// it came from the cache.
type made struct {
	i      int
	u      *Unit
	split  []byte
	reused bool
}

// unitsOf is the first pass of a build: it makes or loads the unit of
// every document with a bounded pool of workers and counts the corpus
// statistics of their child texts. Units are kept in document order with
// their analyses packed (restore unpacks them), at a third of their size,
// or, when the build spills, written to the spill and dropped. Each unit
// done reports the documents done and reused so far.
func (s *unitSource) unitsOf(ctx context.Context, opts Options) (*firstPass, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := min(opts.Workers, max(len(s.docs), 1))
	next := make(chan int)
	// A unit waits here until it is counted: a few per worker, so that
	// workers faster than the counting never pile units up.
	done := make(chan made, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var scratch embed.AnalysisScratch
			for i := range next {
				done <- s.unit(i, &scratch)
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
	pass := &firstPass{stats: s.stats}
	if s.spill == nil {
		pass.units = make([]*Unit, len(s.docs))
	}
	for n := range s.docs {
		var err error
		select {
		case m := <-done:
			err = s.keep(m, pass)
			opts.OnProgress(Progress{Stage: StageSplit, Done: n + 1, Total: len(s.docs), Reused: pass.reused})
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			stop(cancel, &wg, done)
			return nil, err
		}
	}
	wg.Wait()
	return pass, s.finishSpill()
}

// stop cancels the workers of a first pass and waits for them, dropping
// the units they still hand on so that none blocks.
func stop(cancel context.CancelFunc, wg *sync.WaitGroup, done chan made) {
	cancel()
	go func() {
		wg.Wait()
		close(done)
	}()
	for range done {
	}
}

// keep counts the unit m and keeps it in pass, or in the spill with its
// analyses as term ids.
func (s *unitSource) keep(m made, pass *firstPass) error {
	if m.reused {
		pass.reused++
	}
	pass.parents += len(m.u.Parents)
	pass.children += len(m.u.Children)
	if s.spill != nil {
		return s.spill.put(m.i, m.u, m.split)
	}
	for _, a := range m.u.ChildTerms {
		pass.stats.Count(a)
	}
	m.u.packedAnalyses()
	m.u.ChildTerms, m.u.ContextTerms = nil, nil
	pass.units[m.i] = m.u
	return nil
}

// finishSpill readies the spill, when the build has one, to be read.
func (s *unitSource) finishSpill() error {
	if s.spill == nil {
		return nil
	}
	return s.spill.finish()
}

// unit returns the i-th document's unit from the cache when it holds it,
// and otherwise makes it and, with a cache, queues it to be stored. When
// the build spills, the unit comes with its split field, and a unit from
// the cache is a view of its payload, to be counted and dropped.
func (s *unitSource) unit(i int, scratch *embed.AnalysisScratch) made {
	doc := s.docs[i]
	var key unitKey
	if s.cache != nil {
		key = keyOf(s.scope, doc)
		if m, ok := s.cached(i, key); ok {
			return m
		}
	}
	m := made{i: i, u: newUnit(doc, s.split, s.shape, scratch)}
	switch {
	case s.cache != nil:
		payload := encodeUnitPayload(m.u)
		s.cache.storePayload(key, payload)
		if s.spill != nil {
			m.split, _ = splitFieldOf(payload)
		}
	case s.spill != nil:
		m.split = encodeSplitField(m.u)
	}
	return m
}

// cached returns the i-th document's unit from the cache, when it holds
// it under key.
func (s *unitSource) cached(i int, key unitKey) (made, bool) {
	if s.spill == nil {
		u, ok := s.cache.load(key)
		return made{i: i, u: u, reused: true}, ok
	}
	payload, ok := s.cache.loadPayload(key)
	if !ok {
		return made{}, false
	}
	u, err := decodeUnitPayload(payload, decodeView)
	split, ok := splitFieldOf(payload)
	return made{i: i, u: u, split: split, reused: true}, err == nil && ok
}

// take returns the i-th document's unit, whole, for the second pass: from
// the spill, or the unit kept with its analyses restored.
func (s *unitSource) take(i int, units []*Unit, scratch *embed.AnalysisScratch) (*Unit, error) {
	if s.spill != nil {
		return s.spilled(i)
	}
	s.restore(i, units[i], scratch)
	return units[i], nil
}

// spilled reads the i-th document's unit back from the spill.
func (s *unitSource) spilled(i int) (*Unit, error) {
	u, err := s.spill.take(i)
	if err != nil {
		return nil, fmt.Errorf("unit of document %s: %w", s.docs[i].ID, err)
	}
	return u, nil
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

// childTexts returns what is embedded for every child of every unit, in
// order, for an embedder fitted on texts: from the units kept, or read
// back from the spill.
func (s *unitSource) childTexts(units []*Unit) ([]string, error) {
	var texts []string
	for i := range s.docs {
		if s.spill == nil {
			texts = append(texts, units[i].childTexts()...)
			continue
		}
		u, err := s.spilled(i)
		if err != nil {
			return nil, err
		}
		texts = append(texts, u.childTexts()...)
	}
	return texts, nil
}
