package indexer

import (
	"context"
	"fmt"
	"sync"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/segment"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// SegmentOptions tune BuildSegment.
type SegmentOptions struct {
	// Workers split and analyse documents concurrently (default
	// GOMAXPROCS).
	Workers int
	// ContextWeight above zero analyses each parent's context into the
	// segment (only whether it is above zero matters: a segment holds
	// counts).
	ContextWeight float32
	// OnParent, when set, receives every parent in document order. An
	// error fails the build.
	OnParent func(hierarchy.Parent) error
	// OnProgress, when set, is told how many documents are in the
	// segment so far, from one goroutine.
	OnProgress func(done int)
	// Buffer, when set, is memory the segment's bytes are written into
	// when they fit (the Data of a segment no longer needed, say), so
	// that a build of many runs does not allocate and clear each one's.
	Buffer []byte
	// Writer, when set, is the writer the segment is made in, emptied
	// first (the writer of a segment already made, say), so that a build
	// of many runs reuses the memory one run grew.
	Writer *segment.Writer
}

// Segment is what BuildSegment made: the segment's bytes, and how many
// parents and children it holds.
type Segment struct {
	Data              []byte
	Parents, Children int
}

// BuildSegment splits and analyses docs (GroupSegments cuts a corpus into
// the runs of documents that make its segments) and writes them into one
// segment (package segment: counts, no weights), in document order
// whatever the concurrency, so the same documents always make the same
// bytes. Each text is analysed once, in one pass: a segment's statistics
// are its own counts, so nothing is fitted and nothing spilled. A unit
// leaves memory once it is in the segment, and workers never run more
// than a few units ahead of the one the segment waits for.
func BuildSegment(ctx context.Context, docs []hierarchy.Document, b hierarchy.DocumentSplitter, opts SegmentOptions) (Segment, error) {
	opts = opts.withDefaults()
	units, stop := makeUnits(ctx, docs, b, unitShape{analysed: true, contexts: opts.ContextWeight > 0}, opts.Workers)
	defer stop()
	w := opts.Writer
	w.Reset(opts.ContextWeight > 0)
	var built Segment
	for i := range docs {
		u, err := units.next(ctx, i)
		if err != nil {
			return built, err
		}
		if err := handParents(u, opts.OnParent); err != nil {
			return built, err
		}
		if err := addUnit(w, u, opts.ContextWeight > 0); err != nil {
			return built, fmt.Errorf("document %s: %w", docs[i].ID, err)
		}
		units.release(i)
		built.Parents += u.stored()
		built.Children += len(u.Children)
		opts.OnProgress(i + 1)
	}
	data, err := w.AppendTo(opts.Buffer[:0])
	built.Data = data
	return built, err
}

// withDefaults fills zero options.
func (o SegmentOptions) withDefaults() SegmentOptions {
	full := Options{Workers: o.Workers}.withDefaults()
	o.Workers = full.Workers
	if o.OnProgress == nil {
		o.OnProgress = func(int) {}
	}
	if o.Writer == nil {
		o.Writer = segment.NewWriter(false)
	}
	return o
}

// unitQueue hands the units of a run's documents on in document order.
// The analyses of each unit take their arrays from an arena of their own,
// which release frees for the units made after: the few units between a
// worker and the writer reuse the same memory all through the run.
type unitQueue struct {
	ready  []chan *Unit             // by document: its unit, once made
	arenas []*bm25.AnalysisArena    // by document: its unit's analyses' arena
	free   chan *bm25.AnalysisArena // arenas released, for the next units
	slots  chan struct{}
}

// makeUnits makes the unit of every document with a pool of workers,
// each unit given out by next in document order. A worker takes a slot
// before it starts a document and next gives it back, so the units made
// and not yet taken stay a few per worker. stop cancels the workers and
// waits for them.
func makeUnits(ctx context.Context, docs []hierarchy.Document, b hierarchy.DocumentSplitter, shape unitShape, workers int) (*unitQueue, func()) {
	ctx, cancel := context.WithCancel(ctx)
	q := &unitQueue{
		ready: make([]chan *Unit, len(docs)), arenas: make([]*bm25.AnalysisArena, len(docs)),
		free: make(chan *bm25.AnalysisArena, 2*workers+1), slots: make(chan struct{}, 2*workers),
	}
	for i := range q.ready {
		q.ready[i] = make(chan *Unit, 1)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			scratch := new(bm25.AnalysisScratch)
			for i := range next {
				q.arenas[i] = q.arena()
				scratch.UseArena(q.arenas[i])
				q.ready[i] <- newUnit(docs[i], b, shape, scratch)
			}
		})
	}
	wg.Go(func() {
		defer close(next)
		for i := range docs {
			select {
			case q.slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	})
	return q, func() { cancel(); wg.Wait() }
}

// arena returns an arena released by an earlier unit, or a new one.
func (q *unitQueue) arena() *bm25.AnalysisArena {
	select {
	case a := <-q.free:
		return a
	default:
		return new(bm25.AnalysisArena)
	}
}

// next returns the unit of the i-th document once it is made, and gives
// its slot back; i must follow the last i asked for.
func (q *unitQueue) next(ctx context.Context, i int) (*Unit, error) {
	select {
	case u := <-q.ready[i]:
		<-q.slots
		return u, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// release frees the memory of the analyses of the i-th document's unit,
// which no one may read after, for the units made next.
func (q *unitQueue) release(i int) {
	a := q.arenas[i]
	q.arenas[i] = nil
	a.Reset()
	select {
	case q.free <- a:
	default:
	}
}

// addUnit adds u's parents to w, in order, each with its context's
// analysis (when contexts) and then its children, in order.
func addUnit(w *segment.Writer, u *Unit, contexts bool) error {
	byParent := make([][]int, len(u.Parents))
	parents := u.parentIndex()
	for i, c := range u.Children {
		p, ok := parents[c.ParentID]
		if !ok {
			return fmt.Errorf("child %s points to missing parent %s", c.ID, c.ParentID)
		}
		byParent[p] = append(byParent[p], i)
	}
	for p := range u.Parents {
		var context bm25.Analysis
		if contexts {
			context = u.ContextTerms[p]
		}
		if err := w.AddParent(u.Parents[p].ID, u.Parents[p].DocID, context); err != nil {
			return err
		}
		for _, i := range byParent[p] {
			if err := w.AddChild(u.Children[i].ID, u.Children[i].Ordinal, u.ChildTerms[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
