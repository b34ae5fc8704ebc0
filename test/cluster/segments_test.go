//go:build cluster

package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/server"
)

// TestSegmentsEditSharesShardsThroughTheService serves a Corpus of
// segments over a ConfigMap of notes cut into three runs, under the
// operator's own image and RBAC. An edit of one note makes a revision that
// creates the edited run's shards and its manifest and reuses the other
// runs' (status.lastBuild.configMaps); its query pods load it, shared
// shards included, under their Role and answer with the edited note
// first; once the first revision is past retention, the shared shards
// left are exactly those the active revision names; and a shard deleted
// by hand is stored again, and restarted query pods load it.
func TestSegmentsEditSharesShardsThroughTheService(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "segments")
	notes := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "notes"}, Data: notesInRuns("notes", 3)}
	size := &v1alpha1.ChunkingPolicy{ObjectMeta: metav1.ObjectMeta{Name: ns}, // cluster-scoped
		Spec: v1alpha1.ChunkingPolicySpec{Parent: &v1alpha1.ChunkSize{ChunkSize: 800}, Child: &v1alpha1.ChunkSize{ChunkSize: 160}}}
	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "notes"}, Spec: v1alpha1.CorpusSpec{
		ChunkingPolicyRef: v1alpha1.PolicyReference{Name: size.Name},
		Sources:           []v1alpha1.Source{{Name: "notes", ConfigMap: &v1alpha1.ConfigMapSource{Name: notes.Name}}},
		VectorStore:       &v1alpha1.VectorStore{Embedded: &v1alpha1.EmbeddedVectorStore{Layout: v1alpha1.LayoutSegments}},
		RetainRevisions:   1,
	}}
	r := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "notes"}, Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name}}}
	for _, obj := range []client.Object{notes, size, c, r} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { k8s.Delete(context.Background(), size) })
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=3m", "corpus/"+c.Name)
	waitCurrent(t, c, time.Minute)
	first := c.Status.ActiveRevision.Name
	if stored := c.Status.LastBuild.ConfigMaps; stored == nil || stored.Created < 4 || stored.Reused != 0 {
		t.Fatalf("the first build's lastBuild.configMaps %+v, want 3 runs' shards and a manifest created", stored)
	}

	edited := "run1-a"
	patch := client.MergeFrom(notes.DeepCopy())
	notes.Data[edited] = "Zebras and their stripes, edited: a herd crosses the river at dawn."
	if err := k8s.Patch(ctx, notes, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the edit's revision active", func() (bool, error) {
		get(t, c)
		return c.Status.ActiveRevision.Name != first && c.Status.LastBuild.Revision == c.Status.ActiveRevision.Name, nil
	})
	rev := c.Status.ActiveRevision.Name
	stored := c.Status.LastBuild.ConfigMaps
	if stored == nil || stored.Reused < 2 || stored.Created < 2 {
		t.Fatalf("the edit's lastBuild.configMaps %+v, want the two unchanged runs' shards reused and the edited run's created", stored)
	}
	waitOnlyRevision(t, ns, r.Name, rev)
	e := endpointOf(t, ns, r.Name)
	var answer *server.RetrieveResponse
	eventually(t, time.Minute, "the Service to answer from the edit's revision", func() (bool, error) {
		var err error
		answer, err = e.retrieve(ctx, "zebras stripes herd river", 3)
		return err == nil && answer.Revision == rev, err
	})
	if len(answer.Results) == 0 || answer.Results[0].DocID != notes.Name+"/"+edited {
		t.Fatalf("revision %s answered %+v, want the edited note %s/%s first", rev, answer.Results, notes.Name, edited)
	}

	var manifest corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.RevisionObjectName(rev)}, &manifest); err != nil {
		t.Fatal(err)
	}
	names, err := cmbundle.Names(&manifest)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(names[:len(names)-1]))
	eventually(t, time.Minute, "only the shards the active revision names", func() (bool, error) {
		var list corev1.ConfigMapList
		sel := client.MatchingLabelsSelector{Selector: cmbundle.SharedShardSelector(c.Name)}
		if err := k8s.List(ctx, &list, client.InNamespace(ns), sel); err != nil {
			return false, err
		}
		var got []string
		for _, cm := range list.Items {
			got = append(got, cm.Name)
		}
		slices.Sort(got)
		return slices.Equal(got, want), fmt.Errorf("shared shards %v, want %v", got, want)
	})
	t.Logf("revision %s after one edited note: lastBuild.configMaps %+v; %s answered first through the Service", rev[:8], *stored, answer.Results[0].DocID)

	checkShardStoredAgain(t, c, r, want[0])
}

// checkShardStoredAgain deletes the shared shard of the active revision of
// c by hand, waits until the operator has stored it again, restarts the
// Retriever's query pods, which load the revision from it, and fails
// unless the Service answers from that revision.
func checkShardStoredAgain(t *testing.T, c *v1alpha1.Corpus, r *v1alpha1.Retriever, shard string) {
	t.Helper()
	ctx := context.Background()
	key := client.ObjectKey{Namespace: c.Namespace, Name: shard}
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, key, &cm); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "delete", "configmap", "-n", c.Namespace, shard)
	eventually(t, time.Minute, "the deleted shard stored again", func() (bool, error) {
		var again corev1.ConfigMap
		err := k8s.Get(ctx, key, &again)
		return err == nil && again.UID != cm.UID, client.IgnoreNotFound(err)
	})
	kubectl(t, "rollout", "restart", "-n", c.Namespace, "deployment/"+r.Name)
	kubectl(t, "rollout", "status", "-n", c.Namespace, "--timeout=2m", "deployment/"+r.Name)
	rev := c.Status.ActiveRevision.Name
	e := endpointOf(t, c.Namespace, r.Name)
	eventually(t, time.Minute, "the restarted query pods to answer", func() (bool, error) {
		answer, err := e.retrieve(ctx, "zebras stripes herd river", 3)
		return err == nil && answer.Revision == rev && len(answer.Results) > 0, err
	})
}

// notesInRuns returns the data of a ConfigMap named cm whose notes a build
// into segments cuts into runs runs of three: the notes of run i are keyed
// run<i>-a, run<i>-b and then one whose document id, cm/key, ends a run.
func notesInRuns(cm string, runs int) map[string]string {
	data := map[string]string{}
	topics := []string{"magma", "tides", "yeast", "glaciers", "comets", "coral", "orchids", "falcons", "granite"}
	for i := range runs {
		last := strings.TrimPrefix(bundletest.RunEndingID(fmt.Sprintf("%s/run%d-end", cm, i)), cm+"/")
		for j, key := range []string{fmt.Sprintf("run%d-a", i), fmt.Sprintf("run%d-b", i), last} {
			topic := topics[(3*i+j)%len(topics)]
			data[key] = strings.Repeat(fmt.Sprintf("A note about %s and how %s changes over the years. ", topic, topic), 8)
		}
	}
	return data
}
