package build

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/parentrag/parentrag/internal/filesum"
	"github.com/parentrag/parentrag/internal/index/segment"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// runSegments builds a revision whose children are segments: the
// documents are cut into runs (indexer.GroupSegments), and each run is a
// segment and a parent pack of its own, named by the run's key. With a
// unit cache directory, a run whose key the segment cache holds is linked
// from there, neither split nor read; any other is split, analysed and
// written, then kept in the cache for the next build. A revision's
// statistics are the sums of its segments' counts, made when it is
// opened, so a build never reads a segment it reuses: an edit costs the
// runs it touched, plus hashing every document to find the runs' keys.
// The bundle is byte for byte the one a build without the cache makes.
func (req *Request) runSegments(ctx context.Context) (Built, error) {
	if req.EmbedderConfig.Kind != bundle.EmbedderLexical {
		return Built{}, fmt.Errorf("a child index of segments needs the lexical embedder, not %q", req.EmbedderConfig.Kind)
	}
	started := time.Now()
	cache, err := openSegmentCache(req.UnitCacheDir)
	if err != nil {
		return Built{}, err
	}
	pending, err := bundle.Begin(req.Dir, req.Replace)
	if err != nil {
		return Built{}, err
	}
	sb := &segmentsBuild{req: req, writer: segment.NewWriter(false), pending: pending, cache: cache, progress: segmentProgress{report: req.OnProgress, total: len(req.Docs)}}
	entries, err := traced(ctx, telemetry.SpanSplit, func() ([]bundle.SegmentEntry, error) { return sb.segments(ctx) })
	if err != nil {
		pending.Abort()
		return Built{}, err
	}
	if req.SaveProgress.Stage != "" && req.OnProgress != nil {
		req.OnProgress(req.SaveProgress)
	}
	m, err := traced(ctx, telemetry.SpanSave, func() (bundle.Manifest, error) { return pending.CommitSegments(entries, req.manifest()) })
	if err != nil {
		return Built{}, err
	}
	if cache != nil && req.UnitCacheMaxAge > 0 {
		cache.prune(started.Add(-req.UnitCacheMaxAge)) // best effort, as for units
	}
	return Built{Manifest: m, Reused: sb.progress.reused, Runs: &sb.runs}, nil
}

// segmentsBuild is one build into segments: the bundle it writes, the
// segment cache it reads and fills, its progress and counts of runs, and
// the writer and memory of the last segment written, in which the next
// one is made.
type segmentsBuild struct {
	req      *Request
	pending  *bundle.Pending
	cache    *segmentCache
	progress segmentProgress
	runs     Runs
	buffer   []byte
	writer   *segment.Writer
}

// segments cuts the documents into runs and puts the segment and parent
// pack of each into the bundle (segmentOf), in order.
func (b *segmentsBuild) segments(ctx context.Context) ([]bundle.SegmentEntry, error) {
	groups := indexer.GroupSegments(b.req.Docs, float32(b.req.EmbedderConfig.ContextWeight), b.req.Policy.unitScope())
	entries := make([]bundle.SegmentEntry, 0, len(groups))
	for _, g := range groups {
		entry, err := b.segmentOf(ctx, g)
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry)
	}
	return entries, nil
}

// count counts one run, reused from the cache or built.
func (r *Runs) count(reused bool) {
	if reused {
		r.Reused++
	} else {
		r.Built++
	}
}

// segmentOf puts the segment and parent pack of g into the bundle: linked
// from the cache when it holds them, built otherwise (and then kept in the
// cache, when there is one), and counts the run.
func (b *segmentsBuild) segmentOf(ctx context.Context, g indexer.SegmentGroup) (bundle.SegmentEntry, error) {
	if err := ctx.Err(); err != nil {
		return bundle.SegmentEntry{}, err
	}
	entry, reused := b.cache.linkInto(g.Key, b.pending.Dir())
	if !reused {
		var err error
		if entry, err = b.build(ctx, g); err != nil {
			return entry, err
		}
		if err := b.cache.keep(entry, b.pending.Dir()); err != nil && b.req.OnUnitsNotStored != nil {
			b.req.OnUnitsNotStored(len(g.Docs), err)
		}
	}
	b.progress.finished(len(g.Docs), reused)
	b.runs.count(reused)
	return entry, nil
}

// build splits and analyses the documents of g and writes their segment
// and parent pack into the bundle's directory. The segment's bytes are
// made in the buffer, which then holds them (written, and free for the
// next segment).
func (b *segmentsBuild) build(ctx context.Context, g indexer.SegmentGroup) (bundle.SegmentEntry, error) {
	dir := b.pending.Dir()
	entry := bundle.SegmentEntry{Key: g.Key, Documents: len(g.Docs), Files: map[string]filesum.Sum{}}
	packDir := filepath.Join(dir, filepath.FromSlash(bundle.ParentPack(g.Key)))
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		return entry, fmt.Errorf("creating parent pack: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, filepath.FromSlash(bundle.SegmentFile(g.Key)))), 0o755); err != nil {
		return entry, fmt.Errorf("creating segment directory: %w", err)
	}
	parents, err := parentstore.NewFileWriter(packDir)
	if err != nil {
		return entry, err
	}
	seg, err := indexer.BuildSegment(ctx, g.Docs, b.req.Policy.Splitter, indexer.SegmentOptions{
		Workers: b.req.Workers, ContextWeight: float32(b.req.EmbedderConfig.ContextWeight),
		OnParent: parents.Add, OnProgress: b.progress.within, Buffer: b.buffer, Writer: b.writer,
	})
	if err != nil {
		parents.Abort()
		return entry, err
	}
	if err := parents.Close(); err != nil {
		return entry, err
	}
	for name, sum := range parents.Written() {
		entry.Files[path.Join(bundle.ParentPack(g.Key), name)] = sum
	}
	rel := bundle.SegmentFile(g.Key)
	entry.Files[rel], err = filesum.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), func(w io.Writer) error {
		_, err := w.Write(seg.Data)
		return err
	})
	b.buffer = seg.Data
	if err != nil {
		return entry, fmt.Errorf("writing segment: %w", err)
	}
	entry.Parents, entry.Children = seg.Parents, seg.Children
	return entry, nil
}

// segmentProgress reports a segments build's documents as one split
// stage over the corpus, runs built and runs reused alike.
type segmentProgress struct {
	report       func(indexer.Progress)
	total        int
	done, reused int
}

// within reports the documents done of the run being built.
func (p *segmentProgress) within(done int) {
	if p.report != nil {
		p.report(indexer.Progress{Stage: indexer.StageSplit, Done: p.done + done, Total: p.total, Reused: p.reused})
	}
}

// finished counts a run of n documents done, reused from the cache or not.
func (p *segmentProgress) finished(n int, reused bool) {
	p.done += n
	if reused {
		p.reused += n
	}
	if p.report != nil {
		p.report(indexer.Progress{Stage: indexer.StageSplit, Done: p.done, Total: p.total, Reused: p.reused})
	}
}
