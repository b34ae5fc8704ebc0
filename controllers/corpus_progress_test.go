package controllers_test

import (
	"context"
	"testing"
	"time"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
)

// TestProgressShowsStoreAndGarbageCollection follows status.progress
// through a build that replaces a revision past retention: after
// embedding, it shows the bundle being saved, its ConfigMaps being stored
// and the old revision being collected, then clears.
func TestProgressShowsStoreAndGarbageCollection(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 600, 150)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	c.Spec.RetainRevisions = 1
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	stop := watchStages(t, c)
	get(t, c)
	c.Spec.Sources[0].Inline[0].Text += "\n\nOne more paragraph about magma."
	if err := k8s.Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	eventually(t, 10*time.Second, "the old revision to be collected", func() (bool, error) {
		get(t, c)
		return len(c.Status.History) == 1 && c.Status.Progress == nil, nil
	})
	stages := stop()
	want := []string{"embed", controllers.StageSave, controllers.StageStore, controllers.StageCollect}
	at := 0
	for _, s := range stages {
		if at < len(want) && s == want[at] {
			at++
		}
	}
	if at < len(want) {
		t.Fatalf("status.progress.stage went %q, want %q in that order", stages, want)
	}
	if last := stages[len(stages)-1]; last != "" {
		t.Errorf("status.progress still shows %q after the build", last)
	}
}

// watchStages records each status.progress.stage of the Corpus as a watch
// delivers it ("" for no progress, each change once) until the returned
// function is called.
func watchStages(t *testing.T, c *v1alpha1.Corpus) func() []string {
	t.Helper()
	last := "\x00"
	return watchCorpus(t, c, func(got *v1alpha1.Corpus) (string, bool) {
		stage := ""
		if got.Status.Progress != nil {
			stage = got.Status.Progress.Stage
		}
		changed := stage != last
		last = stage
		return stage, changed
	})
}
