package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// TestOverlappingRolloutsKeepEveryLoadedRevision promotes a third revision
// while the Retriever's pods of the first still run and those of the second
// roll out, with retainRevisions 1: every revision a ReplicaSet runs keeps
// its ConfigMaps and stays readable by the query pods' Role until no
// ReplicaSet runs it.
func TestOverlappingRolloutsKeepEveryLoadedRevision(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	c.Spec.RetainRevisions = 1
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	rt := newRetriever(t, ns, "ask", c.Name)
	b := c.Status.ActiveRevision.Name
	rsB := startReplicaSet(t, ns, rt.Name, b)

	setChild(t, p, 120)
	cRev := waitActiveAfter(t, c, b)
	rsC := startReplicaSet(t, ns, rt.Name, cRev)
	setChild(t, p, 90)
	d := waitActiveAfter(t, c, cRev)

	eventually(t, 30*time.Second, "the Retriever to load B and C and roll out D", func() (bool, error) {
		get(t, rt)
		return rt.Status.DesiredRevision == d && slices.Equal(rt.Status.LoadedRevisions, sorted(b, cRev)),
			fmt.Errorf("desired %s loaded %v", rt.Status.DesiredRevision, rt.Status.LoadedRevisions)
	})
	for _, rev := range []string{b, cRev} {
		if len(revisionConfigMaps(t, c, rev)) == 0 {
			t.Fatalf("revision %s is loaded by a ReplicaSet but its ConfigMaps were deleted", rev)
		}
	}
	waitRoleNames(t, ns, rt.Name, configMapNames(t, c, b, cRev, d))

	// The rollout ends: the old ReplicaSets are scaled to zero, and what
	// they ran goes, past retention.
	stopReplicaSet(t, rsB)
	stopReplicaSet(t, rsC)
	eventually(t, 30*time.Second, "B and C to be deleted", func() (bool, error) {
		return len(revisionConfigMaps(t, c, b)) == 0 && len(revisionConfigMaps(t, c, cRev)) == 0, nil
	})
	waitRoleNames(t, ns, rt.Name, configMapNames(t, c, d))
}

// waitActiveAfter waits until the Corpus is Ready on a revision other
// than previous and returns it.
func waitActiveAfter(t *testing.T, c *v1alpha1.Corpus, previous string) string {
	t.Helper()
	eventually(t, 60*time.Second, "a new active revision", func() (bool, error) {
		get(t, c)
		a := c.Status.ActiveRevision
		return a != nil && a.Name != previous && c.Status.ObservedGeneration == c.Generation, nil
	})
	return c.Status.ActiveRevision.Name
}

// configMapNames lists, sorted, the ConfigMaps of the given revisions.
func configMapNames(t *testing.T, c *v1alpha1.Corpus, revisions ...string) []string {
	t.Helper()
	var out []string
	for _, rev := range revisions {
		for _, cm := range revisionConfigMaps(t, c, rev) {
			out = append(out, cm.Name)
		}
	}
	slices.Sort(out)
	return out
}

// waitRoleNames waits until the query Role allows get on exactly names.
func waitRoleNames(t *testing.T, ns, name string, names []string) {
	t.Helper()
	eventually(t, 30*time.Second, "the query Role's ConfigMaps", func() (bool, error) {
		var role rbacv1.Role
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &role); err != nil {
			return false, err
		}
		got := slices.Clone(role.Rules[0].ResourceNames)
		slices.Sort(got)
		return slices.Equal(got, names), fmt.Errorf("role names %v, want %v", got, names)
	})
}

// sorted returns its arguments sorted.
func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}
