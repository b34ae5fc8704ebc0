package indexer

import (
	"context"
	"sync"

	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// unitsOf returns the unit of every document, in document order, made by
// a bounded pool of workers.
func unitsOf(ctx context.Context, docs []hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, opts Options) ([]*Unit, error) {
	units := make([]*Unit, len(docs))
	next := make(chan int)
	done := make(chan struct{}, len(docs))
	var wg sync.WaitGroup
	for range min(opts.Workers, max(len(docs), 1)) {
		wg.Go(func() {
			var scratch embed.AnalysisScratch
			for i := range next {
				units[i] = newUnit(docs[i], b, shape, &scratch)
				done <- struct{}{}
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
	for n := range docs {
		select {
		case <-done:
			opts.OnProgress(Progress{Stage: StageSplit, Done: n + 1, Total: len(docs)})
		case <-ctx.Done():
			wg.Wait()
			return nil, ctx.Err()
		}
	}
	wg.Wait()
	return units, nil
}
