package controllers_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/milvustest"
)

func TestAChangeDuringABuildSupersedesIt(t *testing.T) {
	t.Parallel()
	srv := milvustest.Start(t)
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := milvusCorpus(ns, p.Name, srv.Addr())
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	first := c.Status.ActiveRevision.Name
	stopWatching := watchReady(t, c)
	// A slow Milvus keeps the next build in flight long enough to change
	// the policy again under it.
	srv.SetLatency(400 * time.Millisecond)
	setChild(t, p, 120)
	var stale string
	eventually(t, 30*time.Second, "the second build to start", func() (bool, error) {
		get(t, c)
		if pr := c.Status.Progress; pr != nil && pr.Revision != first {
			stale = pr.Revision
		}
		return stale != "", nil
	})
	setChild(t, p, 90)
	eventually(t, 60*time.Second, "the third revision to be active", func() (bool, error) {
		get(t, c)
		a := c.Status.ActiveRevision
		return a.Name != first && a.Name != stale && c.Status.ObservedGeneration == c.Generation, nil
	})
	srv.SetLatency(0)
	// The active revision served throughout: Ready never left True.
	seen := stopWatching()
	for _, st := range seen {
		if !strings.HasPrefix(st, "True/") {
			t.Fatalf("Ready left True while the active revision served: %v", seen)
		}
	}
	if !hasEvent(t, c, v1alpha1.ReasonBuildSuperseded) {
		t.Fatal("no BuildSuperseded event")
	}
	for _, h := range c.Status.History {
		if h.Name == stale {
			t.Fatalf("the superseded revision %s was promoted: %+v", stale, c.Status.History)
		}
	}
	if n := len(revisionConfigMaps(t, c, stale)); n != 0 {
		t.Fatalf("%d ConfigMaps of the superseded revision remain", n)
	}
	if slices.Contains(srv.Collections(), c.MilvusCollection(stale)) {
		t.Fatalf("the superseded collection remains: %v", srv.Collections())
	}
	for _, col := range c.Status.Inventory.Collections {
		if col.Revision == stale {
			t.Fatalf("the superseded collection is still in the inventory: %+v", c.Status.Inventory)
		}
	}
}

// setChild sets the policy's child size.
func setChild(t *testing.T, p *v1alpha1.ChunkingPolicy, size int) {
	t.Helper()
	get(t, p)
	p.Spec.Child = &v1alpha1.ChunkSize{ChunkSize: size}
	if err := k8s.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}
