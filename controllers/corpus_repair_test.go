package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// TestDeletedRevisionConfigMapsAreStoredAgain: ConfigMaps of the active
// revision deleted by hand (a shared shard of a segment, a revision's own
// shard) are stored again at once, the same revision with the same
// manifest, and the revision still unpacks, every file checked against
// its manifest, and answers; the rest of its ConfigMaps are left as they
// were. It holds for both layouts of the embedded store, and again once
// the Corpus is quiet.
func TestDeletedRevisionConfigMapsAreStoredAgain(t *testing.T) {
	for _, layout := range []string{v1alpha1.LayoutSegments, ""} {
		t.Run("layout="+layout, func(t *testing.T) {
			ns := newNamespace(t)
			p := newPolicy(t, 800, 160)
			c := inlineCorpus(ns, p.Name, threeRuns()...)
			if layout != "" {
				c.Spec.VectorStore = &v1alpha1.VectorStore{Embedded: &v1alpha1.EmbeddedVectorStore{Layout: layout}}
			}
			if err := k8s.Create(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			waitCurrent(t, c, 60*time.Second)
			checkStoredAgain(t, c, pickShards(t, c))
			// Once the reconciles of the repair are over, only the watch
			// of deletions can bring the next one (no resync comes
			// within the test).
			time.Sleep(2 * time.Second)
			checkStoredAgain(t, c, pickShards(t, c))
		})
	}
}

// pickShards returns, by name, the UIDs of the active revision's first
// shared shard and first own shard, those of them it has.
func pickShards(t *testing.T, c *v1alpha1.Corpus) map[string]types.UID {
	t.Helper()
	var manifest corev1.ConfigMap
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: c.Namespace, Name: c.RevisionObjectName(c.Status.ActiveRevision.Name)}, &manifest); err != nil {
		t.Fatal(err)
	}
	names, err := cmbundle.Names(&manifest)
	if err != nil {
		t.Fatal(err)
	}
	picked := map[string]types.UID{}
	var own, shared bool
	for _, n := range names[:len(names)-1] { // the manifest is last
		var cm corev1.ConfigMap
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: c.Namespace, Name: n}, &cm); err != nil {
			t.Fatal(err)
		}
		isShared := cm.Labels[cmbundle.LabelRevision] == ""
		if (isShared && !shared) || (!isShared && !own) {
			picked[n] = cm.UID
			shared, own = shared || isShared, own || !isShared
		}
	}
	if len(picked) == 0 {
		t.Fatalf("revision manifest %s names no shard", manifest.Name)
	}
	return picked
}

// checkStoredAgain deletes the picked ConfigMaps of the active revision of
// c and fails unless each comes back as a new object, the revision and its
// manifest stay the same, the repair's build counts what it created and
// reused, and the revision unpacks and answers.
func checkStoredAgain(t *testing.T, c *v1alpha1.Corpus, picked map[string]types.UID) {
	t.Helper()
	ctx := context.Background()
	active := c.Status.ActiveRevision.Name
	manifestKey := client.ObjectKey{Namespace: c.Namespace, Name: c.RevisionObjectName(active)}
	var manifest corev1.ConfigMap
	if err := k8s.Get(ctx, manifestKey, &manifest); err != nil {
		t.Fatal(err)
	}
	for name := range picked {
		if err := k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 60*time.Second, "the deleted ConfigMaps stored again", func() (bool, error) {
		for name, uid := range picked {
			var cm corev1.ConfigMap
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &cm); err != nil || cm.UID == uid {
				return false, nil
			}
		}
		get(t, c)
		return c.Status.LastBuild != nil && c.Status.LastBuild.Revision == active && c.Status.LastBuild.ConfigMaps != nil &&
			c.Status.LastBuild.ConfigMaps.Created == len(picked), nil
	})
	var after corev1.ConfigMap
	if err := k8s.Get(ctx, manifestKey, &after); err != nil || after.UID != manifest.UID {
		t.Fatalf("the revision manifest after the repair: uid %s (error %v), want the one stored first, %s", after.UID, err, manifest.UID)
	}
	if c.Status.ActiveRevision.Name != active {
		t.Fatalf("the active revision went from %s to %s", active, c.Status.ActiveRevision.Name)
	}
	if stored := c.Status.LastBuild.ConfigMaps; stored.Reused == 0 {
		t.Fatalf("the repair's lastBuild.configMaps %+v, want the ConfigMaps still there reused", *stored)
	}
	b := openActive(t, c)
	topic := c.Spec.Sources[0].Inline[4]
	if results, err := b.Retriever.Retrieve(ctx, topic.Title, retrieve.Options{}); err != nil || len(results) == 0 || results[0].DocID != topic.ID {
		t.Fatalf("the repaired revision found %+v (error %v) for %q", results, err, topic.Title)
	}
	if !hasEvent(t, c, "RevisionRepaired") {
		t.Fatal("no RevisionRepaired event")
	}
}

// TestARevisionThatBuildsToOtherFilesIsNotRepaired: when building the
// revision again makes other files than its manifest names (as when
// another parentrag version stored it), the operator stores nothing under
// the revision's names, leaves the manifest as it is and says why in a
// warning event, and the Corpus stays Ready on its revision.
func TestARevisionThatBuildsToOtherFilesIsNotRepaired(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, threeRuns()...)
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	active := c.Status.ActiveRevision.Name
	// Nothing reconciles while the revision is changed under it.
	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = true })
	waitSuspended(t, c, &c.Status.Conditions, metav1.ConditionTrue)
	var lost string
	for name := range pickShards(t, c) {
		lost = name
	}
	if err := k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: lost}}); err != nil {
		t.Fatal(err)
	}
	other := storeOtherFileTable(t, c)
	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = false })

	eventually(t, 60*time.Second, "the warning that the revision was not stored again", func() (bool, error) {
		return hasEvent(t, c, "RevisionConfigMapsMissing"), nil
	})
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: lost}, &cm); err == nil {
		t.Fatalf("shard %s was stored again from a build that differs from the revision", lost)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.RevisionObjectName(active)}, &cm); err != nil || cm.UID != other {
		t.Fatalf("the revision manifest: uid %s (error %v), want the one the test stored, %s", cm.UID, err, other)
	}
	get(t, c)
	if c.Status.ActiveRevision.Name != active || conditionOf(c.Status.Conditions, "Ready").Status != metav1.ConditionTrue {
		t.Fatalf("active revision %s, Ready %+v; want %s, True", c.Status.ActiveRevision.Name, conditionOf(c.Status.Conditions, "Ready"), active)
	}
}

// storeOtherFileTable replaces the active revision's manifest of c with
// one whose file table gives its first file another SHA-256, as a
// revision built from other bytes would, and returns the new one's UID.
func storeOtherFileTable(t *testing.T, c *v1alpha1.Corpus) types.UID {
	t.Helper()
	ctx := context.Background()
	var manifest corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.RevisionObjectName(c.Status.ActiveRevision.Name)}, &manifest); err != nil {
		t.Fatal(err)
	}
	var table map[string]any
	if err := json.Unmarshal([]byte(manifest.Data[cmbundle.FilesKey]), &table); err != nil {
		t.Fatal(err)
	}
	first := table["files"].([]any)[0].(map[string]any)
	first["sha256"] = strings.Repeat("0", 64)
	raw, err := json.Marshal(table)
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, &manifest); err != nil {
		t.Fatal(err)
	}
	other := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: manifest.Namespace, Name: manifest.Name, Labels: manifest.Labels, OwnerReferences: manifest.OwnerReferences},
		Data:       maps.Clone(manifest.Data),
		Immutable:  manifest.Immutable,
	}
	other.Data[cmbundle.FilesKey] = string(raw)
	if err := k8s.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	return other.UID
}

// TestAPinToARevisionThatLostConfigMapsStalls: a rollback to a retained
// revision that lost one of its ConfigMaps is refused, naming it in the
// Stalled condition and a warning event, with the active revision left
// serving; once the pin goes, the Corpus is
// Ready again on it.
func TestAPinToARevisionThatLostConfigMapsStalls(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	p, c := readyCorpus(t, ns)
	first := c.Status.ActiveRevision.Name
	var lost string
	for name := range pickShards(t, c) {
		lost = name
	}
	second := changeChild(t, p, c, 100)
	eventually(t, 30*time.Second, "the second revision to be active", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision.Name == second, nil
	})
	if err := k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: lost}}); err != nil {
		t.Fatal(err)
	}
	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Rollout = &v1alpha1.Rollout{PinnedRevision: first} })
	eventually(t, 30*time.Second, "the pin to stall", func() (bool, error) {
		get(t, c)
		st := conditionOf(c.Status.Conditions, v1alpha1.ConditionStalled)
		return st.Reason == v1alpha1.ReasonPinnedRevisionMissing && strings.Contains(st.Message, lost), fmt.Errorf("stalled %+v", st)
	})
	if c.Status.ActiveRevision.Name != second {
		t.Fatalf("a pin to a damaged revision made %s active", c.Status.ActiveRevision.Name)
	}
	if !hasEvent(t, c, v1alpha1.ReasonPinnedRevisionMissing) {
		t.Fatal("no PinnedRevisionMissing event")
	}
	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Rollout = nil })
	eventually(t, 30*time.Second, "Ready again without the pin", func() (bool, error) {
		get(t, c)
		return conditionOf(c.Status.Conditions, v1alpha1.ConditionReady).Status == metav1.ConditionTrue && c.Status.ObservedGeneration == c.Generation, nil
	})
}
