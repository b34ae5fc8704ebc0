package controllers

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// progressPatcher publishes build progress in the Corpus's status while a
// reconcile runs, at most once per interval. It keeps the reconcile's base
// object in step, so the final status patch clears the progress.
type progressPatcher struct {
	ctx      context.Context
	client   client.Client
	corpus   *v1alpha1.Corpus
	base     *v1alpha1.Corpus
	interval time.Duration
	revision string
	last     time.Time
}

// newProgressPatcher returns a patcher for corpus, whose reconcile started
// from base.
func (r *CorpusReconciler) newProgressPatcher(ctx context.Context, corpus, base *v1alpha1.Corpus) *progressPatcher {
	return &progressPatcher{ctx: ctx, client: r.Client, corpus: corpus, base: base, interval: r.progressInterval()}
}

// progressInterval is ProgressInterval, 2s when unset.
func (r *CorpusReconciler) progressInterval() time.Duration {
	if r.ProgressInterval <= 0 {
		return 2 * time.Second
	}
	return r.ProgressInterval
}

// start marks the Corpus Reconciling for the revision and publishes it.
func (p *progressPatcher) start(revision string) {
	p.revision = revision
	markReconciling(&p.corpus.Status.Conditions, p.corpus.Generation, v1alpha1.ReasonIndexing, "building revision "+revision, retrying(p.corpus, revision))
	_ = p.publish(indexer.Progress{Stage: indexer.StageSplit})
}

// retrying reports whether the last build of the revision failed: its
// failure stays in Ready while it is built again.
func retrying(c *v1alpha1.Corpus, revision string) bool {
	lb := c.Status.LastBuild
	return lb != nil && lb.Revision == revision && lb.Result == "Failed"
}

// Stages of a build after the indexer's (indexer.StageSplit, StageFit,
// StageEmbed), as status.progress.stage shows them.
const (
	// StageSave writes the index as a bundle of shards.
	StageSave = "save"
	// StageStore stores the shards as the revision's ConfigMaps.
	StageStore = "store"
	// StageCollect deletes the revisions past retention.
	StageCollect = "collect-garbage"
)

// report is an indexer progress callback. A new stage is always
// published; progress within a stage at most once per interval.
func (p *progressPatcher) report(pr indexer.Progress) {
	cur := p.corpus.Status.Progress
	newStage := cur == nil || cur.Stage != pr.Stage
	if !newStage && time.Since(p.last) < p.interval && pr.Done != pr.Total {
		return
	}
	_ = p.publish(pr)
}

// collecting publishes the status before garbage collection deletes
// anything, so that it no longer names the revisions about to go; after a
// build in this reconcile, its progress shows the stage. An error means
// nothing may be deleted.
func (p *progressPatcher) collecting() error {
	if err := p.publish(indexer.Progress{Stage: StageCollect}); err != nil {
		return fmt.Errorf("recording the history before deleting revisions past retention: %w", err)
	}
	return nil
}

// publish patches the progress, and whatever else changed in status since
// the last patch, against the last status written; a failure is logged
// and returned, not fatal to progress reports, since the final status
// patch follows.
func (p *progressPatcher) publish(pr indexer.Progress) error {
	before := p.base.DeepCopy()
	if p.revision != "" {
		// Only a build in this process has progress of its own to show.
		p.corpus.Status.Progress = &v1alpha1.IndexProgress{Revision: p.revision, Stage: pr.Stage, Done: pr.Done, Total: pr.Total}
	}
	if err := p.client.Status().Patch(p.ctx, p.corpus, client.MergeFrom(before)); err != nil {
		log.FromContext(p.ctx).V(1).Info("could not publish progress", "error", err.Error())
		return err
	}
	p.last = time.Now()
	p.base.Status = *p.corpus.Status.DeepCopy()
	return nil
}

// flush publishes the status as it is now, progress unchanged, so that
// what must survive a crash (the inventory) is recorded before it is used;
// an error means it is not recorded and must not be used.
func (p *progressPatcher) flush() error {
	pr := indexer.Progress{}
	if cur := p.corpus.Status.Progress; cur != nil {
		pr = indexer.Progress{Stage: cur.Stage, Done: cur.Done, Total: cur.Total}
	}
	if err := p.publish(pr); err != nil {
		return fmt.Errorf("recording status before going on: %w", err)
	}
	return nil
}

// stop clears the progress from the object; the final patch writes it.
func (p *progressPatcher) stop() { p.corpus.Status.Progress = nil }
