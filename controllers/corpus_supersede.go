package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// supersededError cancels a build that no longer matches what the Corpus
// calls for.
type supersededError struct{ by string }

func (e *supersededError) Error() string { return "superseded by " + e.by }

// buildUnlessSuperseded builds the revision while watching, every progress
// interval, whether the spec, the policy or the sources now call for
// another revision; if so the build is cancelled. It reports the
// revision that superseded the build, "" when the build ran to its end.
func (r *CorpusReconciler) buildUnlessSuperseded(ctx context.Context, s *corpusState, name string) (string, error) {
	buildCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	watched := make(chan struct{})
	// The goroutine gets copies: s.corpus is written while it runs.
	key, revision := client.ObjectKeyFromObject(s.corpus), s.revision
	go func() {
		defer close(watched)
		r.watchSuperseded(buildCtx, key, revision, cancel, done)
	}()
	err := r.build(buildCtx, s, name)
	close(done)
	<-watched
	var sup *supersededError
	if err != nil && errors.As(context.Cause(buildCtx), &sup) {
		return sup.by, nil
	}
	return "", err
}

// watchSuperseded cancels ctx with a supersededError once the revision the
// Corpus calls for differs from the one being built, or the Corpus is
// deleted; it returns when done is closed or ctx ends.
func (r *CorpusReconciler) watchSuperseded(ctx context.Context, key client.ObjectKey, revision string, cancel context.CancelCauseFunc, done <-chan struct{}) {
	tick := time.NewTicker(r.progressInterval())
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			if by := r.supersededBy(ctx, key, revision); by != "" {
				cancel(&supersededError{by: by})
				return
			}
		}
	}
}

// supersededBy returns the revision the Corpus now calls for when it is
// not building ("deletion" when the Corpus is going away), "" when the
// build is still wanted or the answer is unknown.
func (r *CorpusReconciler) supersededBy(ctx context.Context, key client.ObjectKey, building string) string {
	var c v1alpha1.Corpus
	if err := r.Get(ctx, key, &c); err != nil {
		if apierrors.IsNotFound(err) {
			return "deletion"
		}
		return ""
	}
	if !c.DeletionTimestamp.IsZero() {
		return "deletion"
	}
	probe := &corpusState{corpus: &c}
	defer probe.releaseSources()
	for _, step := range []corpusStep{r.resolvePolicy, r.readSources, r.resolveEmbedder, r.computeRevision} {
		if result, err := step(ctx, probe); err != nil || !result.IsZero() {
			return ""
		}
	}
	if probe.revision != building {
		return probe.revision
	}
	return ""
}

// discardSuperseded removes what a cancelled build left (its ConfigMaps
// and its Milvus collection) and asks for a reconcile at once, which builds
// the revision that superseded it.
func (r *CorpusReconciler) discardSuperseded(ctx context.Context, s *corpusState, by string) (ctrl.Result, error) {
	c := s.corpus
	log.FromContext(ctx).Info("build superseded", "revision", s.revision, "by", by)
	if err := r.discardRevision(ctx, c, s.revision); err != nil {
		return ctrl.Result{}, fmt.Errorf("discarding superseded revision %s: %w", s.revision, err)
	}
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, v1alpha1.ReasonBuildSuperseded, "Build",
		"stopped building revision %s: superseded by %s; its ConfigMaps and collection were removed", s.revision, by)
	s.superseded = true
	s.reason, s.message = v1alpha1.ReasonBuildSuperseded, fmt.Sprintf("the build of revision %s was superseded by %s, which is built next", s.revision, by)
	return ctrl.Result{RequeueAfter: time.Millisecond}, nil
}
