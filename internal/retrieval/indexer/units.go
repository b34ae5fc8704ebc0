package indexer

import (
	"cmp"
	"context"
	"sync"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// unitsOf returns the unit of every document, in document order, made or
// loaded from opts.Units by a bounded pool of workers, and how many came
// from the cache. Each split reports the documents done and reused so far.
func unitsOf(ctx context.Context, docs []hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, opts Options) ([]*Unit, int, error) {
	units := make([]*Unit, len(docs))
	var scope []byte
	if opts.Units != nil {
		scope = unitScope(shape, opts.UnitScope)
	}
	next := make(chan int)
	type outcome struct {
		reused bool
		err    error
	}
	done := make(chan outcome, len(docs))
	var wg sync.WaitGroup
	for range min(opts.Workers, max(len(docs), 1)) {
		wg.Go(func() {
			var scratch embed.AnalysisScratch
			for i := range next {
				var o outcome
				units[i], o.reused, o.err = unitOf(docs[i], b, shape, opts.Units, scope, &scratch)
				done <- o
			}
		})
	}
	go func() {
		defer close(next)
		for i := range docs {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	reused := 0
	var err error
	for n := range docs {
		select {
		case o := <-done:
			if o.reused {
				reused++
			}
			err = cmp.Or(err, o.err)
			opts.OnProgress(Progress{Stage: StageSplit, Done: n + 1, Total: len(docs), Reused: reused})
		case <-ctx.Done():
			wg.Wait()
			return nil, 0, ctx.Err()
		}
	}
	wg.Wait()
	return units, reused, err
}

// unitOf returns doc's unit from the cache when it holds it, and otherwise
// makes it and, with a cache, stores it.
func unitOf(doc hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, cache *UnitCache, scope []byte, scratch *embed.AnalysisScratch) (*Unit, bool, error) {
	if cache == nil {
		return newUnit(doc, b, shape, scratch), false, nil
	}
	key := keyOf(scope, doc)
	if u, ok := cache.load(key); ok {
		return u, true, nil
	}
	u := newUnit(doc, b, shape, scratch)
	return u, false, cache.store(key, u)
}
