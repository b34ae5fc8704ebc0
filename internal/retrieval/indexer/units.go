package indexer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// unitSource makes or loads the unit of each document of a build.
type unitSource struct {
	docs  []hierarchy.Document
	split hierarchy.DocumentSplitter
	shape unitShape
	cache *UnitCache
	scope []byte
	prev  *unitPack  // the cache's pack of this scope, if any
	spill *unitSpill // nil: units stay in memory between the passes
	stats *bm25.CorpusStats
	// storeErr is why the units could not be kept in the cache, if so.
	storeErr error
}

// newUnitSource readies the units of docs, counting their child texts into
// corpus statistics of their own. With opts.Units, units come from the
// cache's pack of their scope when it holds them, and spill into the next
// one; otherwise they spill to opts.SpillDir when set and stay in memory
// when not. close releases the spill and the pack.
func newUnitSource(docs []hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, opts Options) (*unitSource, error) {
	s := &unitSource{docs: docs, split: b, shape: shape, cache: opts.Units, stats: bm25.NewCorpusStats()}
	if s.cache != nil {
		s.scope = unitScope(shape, opts.UnitScope)
		s.reusePack()
		var err error
		if s.spill, err = newUnitSpill(s.cache.dir, packTempPrefix+"*", len(docs), s.stats); err != nil {
			s.close()
			return nil, s.cacheErr(err)
		}
		return s, nil
	}
	if opts.SpillDir != "" {
		var err error
		if s.spill, err = newUnitSpill(opts.SpillDir, ".units-*.spill", len(docs), s.stats); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// reusePack opens the cache's pack of the build's scope and gives its
// terms their ids again, so that its units can be counted and copied as
// they are; without a sound pack, every unit is made.
func (s *unitSource) reusePack() {
	p := s.cache.previous(s.scope)
	if p == nil {
		return
	}
	stats, err := bm25.NewCorpusStatsOf(p.terms)
	if err != nil {
		p.close()
		return
	}
	s.prev, s.stats = p, stats
}

// close removes the spill, when the build has one and did not keep it as
// a pack, and closes the pack it reused.
func (s *unitSource) close() {
	if s.spill != nil {
		s.spill.close()
	}
	s.prev.close()
}

// firstPass is what the first pass of a build leaves: every unit in
// document order (none when the build spills them), how many came from
// the cache, the corpus statistics of their child texts and how many
// parents and children they hold.
type firstPass struct {
	units             []*Unit
	reused            int
	stats             *bm25.CorpusStats
	parents, children int
}

// made is a unit a worker of the first pass hands on: the i-th document's,
// under key when the build has a unit cache. A unit made comes whole, with
// its split field when the build spills units; one reused from the
// cache's pack comes as the pack spilled it, with its child analyses to
// count and where it lay.
type made struct {
	i       int
	key     unitKey
	u       *Unit
	split   []byte
	reused  bool
	spilled []byte
	counts  idList
	packed  packedUnit
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
			var scratch bm25.AnalysisScratch
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
		return s.keepReused(m, pass)
	}
	pass.parents += m.u.stored()
	pass.children += len(m.u.Children)
	if s.spill != nil {
		return s.cacheErr(s.spill.put(m.i, m.key, m.u, m.split))
	}
	for _, a := range m.u.ChildTerms {
		pass.stats.Count(a)
	}
	m.u.packedAnalyses()
	m.u.ChildTerms, m.u.ContextTerms = nil, nil
	pass.units[m.i] = m.u
	return nil
}

// keepReused counts the unit m reused from the cache's pack from its ids
// and copies it into the spill as it is.
func (s *unitSource) keepReused(m made, pass *firstPass) error {
	pass.reused++
	pass.parents += m.packed.parents
	pass.children += m.packed.children
	for i, tokens := range m.counts.tokens {
		if err := pass.stats.AddIDs(tokens, m.counts.analysis(i)); err != nil {
			return fmt.Errorf("unit of document %s: %w", s.docs[m.i].ID, err)
		}
	}
	ref := spillRef{key: m.key, parents: m.packed.parents, children: m.packed.children}
	return s.cacheErr(s.spill.putSpilled(m.i, ref, m.spilled, nil))
}

// finishSpill readies the spill, when the build has one, to be read, and
// keeps it as the cache's pack of the build's scope when the build has a
// unit cache: failing that, the build goes on, with storeErr set.
func (s *unitSource) finishSpill() error {
	if s.spill == nil {
		return nil
	}
	if s.cache == nil {
		return s.spill.finish()
	}
	if s.staleTerms() {
		// The next build starts a term table afresh, reusing no unit.
		_ = os.Remove(s.cache.packPath(s.scope))
		return s.cacheErr(s.spill.finish())
	}
	var err error
	s.storeErr, err = s.spill.persist(s.cache.packPath(s.scope))
	return s.cacheErr(err)
}

// staleTermsSlack and staleTermsFactor bound a pack's term table: past
// staleTermsFactor times the vocabulary plus staleTermsSlack terms, most
// of it is the terms of documents gone since the table was started.
const (
	staleTermsSlack  = 1 << 16
	staleTermsFactor = 4
)

// staleTerms reports whether the build's term table, which it took from
// the previous pack and extended, has outgrown what its documents use, so
// that the build keeps no pack: each reused unit's terms are numbered in
// that table, so only a build that reuses none can shed them.
func (s *unitSource) staleTerms() bool {
	return len(s.stats.Terms()) > staleTermsFactor*s.stats.Counted()+staleTermsSlack
}

// errCacheUnwritable marks a failure to write the spill into the unit
// cache's directory (a full disk, say): Build then runs the first pass
// again without the cache.
var errCacheUnwritable = errors.New("unit cache")

// cacheErr marks err, a failure to write the spill, with
// errCacheUnwritable when the spill is in the unit cache.
func (s *unitSource) cacheErr(err error) error {
	if err != nil && s.cache != nil {
		return fmt.Errorf("%w: %w", errCacheUnwritable, err)
	}
	return err
}

// unit returns the i-th document's unit from the cache's pack when it
// holds it, and otherwise makes it, with its split field when the build
// spills.
func (s *unitSource) unit(i int, scratch *bm25.AnalysisScratch) made {
	doc := s.docs[i]
	var key unitKey
	if s.cache != nil {
		key = keyOf(s.scope, doc)
		if m, ok := s.cached(i, key); ok {
			return m
		}
	}
	m := made{i: i, key: key, u: newUnit(doc, s.split, s.shape, scratch)}
	if s.spill != nil {
		m.split = encodeSplitField(m.u)
	}
	return m
}

// cached returns the i-th document's unit from the cache's pack, when it
// holds it, sound, under key.
func (s *unitSource) cached(i int, key unitKey) (made, bool) {
	if s.prev == nil {
		return made{}, false
	}
	spilled, at, ok := s.prev.unit(key)
	if !ok {
		return made{}, false
	}
	counts, err := spilledCounts(spilled, len(s.prev.terms))
	return made{i: i, key: key, reused: true, spilled: spilled, counts: counts, packed: at}, err == nil
}

// take returns the i-th document's unit, whole, for the second pass: from
// the spill, or the unit kept with its analyses restored.
func (s *unitSource) take(i int, units []*Unit, scratch *bm25.AnalysisScratch) (*Unit, error) {
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
func (s *unitSource) restore(i int, u *Unit, scratch *bm25.AnalysisScratch) {
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
