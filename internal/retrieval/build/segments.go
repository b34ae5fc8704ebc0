package build

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/filesum"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
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
	groups := indexer.GroupSegments(req.Docs, float32(req.EmbedderConfig.ContextWeight), req.Policy.unitScope())
	progress := segmentProgress{report: req.OnProgress, total: len(req.Docs)}
	entries := make([]bundle.SegmentEntry, 0, len(groups))
	runs := &Runs{}
	var buffer []byte // the last segment's bytes, once written: the next one's memory
	for _, g := range groups {
		entry, reused, err := req.segmentOf(ctx, g, pending, cache, &progress, &buffer)
		if err != nil {
			pending.Abort()
			return Built{}, err
		}
		progress.finished(len(g.Docs), reused)
		runs.count(reused)
		entries = append(entries, entry)
	}
	if req.SaveProgress.Stage != "" && req.OnProgress != nil {
		req.OnProgress(req.SaveProgress)
	}
	m, err := pending.CommitSegments(entries, req.manifest())
	if err != nil {
		return Built{}, err
	}
	if cache != nil && req.UnitCacheMaxAge > 0 {
		cache.prune(started.Add(-req.UnitCacheMaxAge)) // best effort, as for units
	}
	return Built{Manifest: m, Reused: progress.reused, Runs: runs}, nil
}

// count counts one run, reused from the cache or built.
func (r *Runs) count(reused bool) {
	if reused {
		r.Reused++
	} else {
		r.Built++
	}
}

// segmentOf puts the segment and parent pack of g into pending: linked
// from the cache when it holds them, built otherwise (and then kept in
// the cache, when there is one), its bytes written in *buffer's memory.
// It reports whether the cache gave them.
func (req *Request) segmentOf(ctx context.Context, g indexer.SegmentGroup, pending *bundle.Pending, cache *segmentCache, progress *segmentProgress, buffer *[]byte) (bundle.SegmentEntry, bool, error) {
	if err := ctx.Err(); err != nil {
		return bundle.SegmentEntry{}, false, err
	}
	if entry, ok := cache.linkInto(g.Key, pending.Dir()); ok {
		return entry, true, nil
	}
	entry, err := req.buildSegment(ctx, g, pending.Dir(), progress, buffer)
	if err != nil {
		return entry, false, err
	}
	if err := cache.keep(entry, pending.Dir()); err != nil && req.OnUnitsNotStored != nil {
		req.OnUnitsNotStored(len(g.Docs), err)
	}
	return entry, false, nil
}

// buildSegment splits and analyses the documents of g and writes their
// segment and parent pack into the bundle directory dir. The segment's
// bytes are made in *buffer's memory, which then holds them (written,
// and free for the next segment).
func (req *Request) buildSegment(ctx context.Context, g indexer.SegmentGroup, dir string, progress *segmentProgress, buffer *[]byte) (bundle.SegmentEntry, error) {
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
	seg, err := indexer.BuildSegment(ctx, g.Docs, req.Policy.Splitter, indexer.SegmentOptions{
		Workers: req.Workers, ContextWeight: float32(req.EmbedderConfig.ContextWeight),
		OnParent: parents.Add, OnProgress: progress.within, Buffer: *buffer,
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
	*buffer = seg.Data
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
