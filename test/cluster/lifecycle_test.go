//go:build cluster

package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
)

// TestOperatorKilledMidBuild kills the operator's pod while it builds a
// revision of a Corpus large enough to take seconds: the Deployment
// starts another, which builds the revision, and nothing of the
// interrupted build is left behind.
func TestOperatorKilledMidBuild(t *testing.T) {
	ns := newNamespace(t, "crash")
	applyKustomization(t, "config/samples", ns)
	c, _ := waitSamplesReady(t, ns)
	first := c.Status.ActiveRevision.Name
	// Suspended while the documents arrive, so that they make one revision:
	// the operator must have seen the suspension first, or a ConfigMap's
	// arrival could start a build of only some of them.
	patchCorpus(t, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = true })
	eventually(t, time.Minute, "the Corpus to say it is suspended", func() (bool, error) {
		get(t, c)
		ready := apimeta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonSuspended && ready.ObservedGeneration == c.Generation, fmt.Errorf("Ready %+v", ready)
	})
	createBulkDocuments(t, ns, 12, 600<<10)
	patchCorpus(t, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = false })

	eventually(t, 2*time.Minute, "the bigger build to start", func() (bool, error) {
		get(t, c)
		p := c.Status.Progress
		return p != nil && p.Revision != first, fmt.Errorf("progress %+v", p)
	})
	killed := c.Status.Progress
	killOperator(t)
	final := waitServedAfter(t, c, &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: samplesRetriever}}, first)
	if final != killed.Revision {
		t.Fatalf("after the kill revision %s was built, want the interrupted %s", final, killed.Revision)
	}
	checkNoLeaks(t, c)
	t.Logf("operator killed at %s %d/%d of revision %s (%d documents); a new operator built it: %d parents, %d children",
		killed.Stage, killed.Done, killed.Total, final[:8], c.Status.ActiveRevision.Documents, c.Status.ActiveRevision.Parents, c.Status.ActiveRevision.Children)
}

// createBulkDocuments adds n ConfigMaps of about size bytes of distinct
// prose each, selected by the samples' Corpus.
func createBulkDocuments(t *testing.T, ns string, n, size int) {
	t.Helper()
	for i := range n {
		var b strings.Builder
		for j := 0; b.Len() < size; j++ {
			fmt.Fprintf(&b, "Section %d of bulk file %d. Term%d-%d and word%d describe item %d of the archive in plain prose.\n\n", j, i, i, j%97, j%89, j)
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("bulk-%d", i), Labels: map[string]string{"parentrag.io/sample": "docs"}},
			Data:       map[string]string{fmt.Sprintf("bulk-%d.md", i): b.String()},
		}
		if err := k8s.Create(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
	}
}

// killOperator deletes the operator's pod at once, as a node failure or an
// OOM kill would end it, and waits until its Deployment runs another.
func killOperator(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	p, err := operatorPod(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "another operator pod", func() (bool, error) {
		next, err := operatorPod(ctx)
		return err == nil && next.UID != p.UID && podReady(next), err
	})
}

// checkNoLeaks checks that what a Corpus owns is exactly what its status
// accounts for: every revision ConfigMap belongs to a retained revision
// and is one of that revision's manifest's names, and no Job or claim is
// left of a revision that is not retained.
func checkNoLeaks(t *testing.T, c *v1alpha1.Corpus) {
	t.Helper()
	get(t, c)
	retained := map[string]bool{}
	for _, h := range c.Status.History {
		retained[h.Name] = true
	}
	byRevision := map[string][]string{}
	for _, cm := range revisionConfigMaps(t, c.Namespace, c.Name, "") {
		rev := cm.Labels["parentrag.io/revision"]
		if cm.Labels["parentrag.io/role"] != "" {
			continue // a Job's plan and status ConfigMaps, checked with their Job
		}
		byRevision[rev] = append(byRevision[rev], cm.Name)
	}
	for rev, names := range byRevision {
		if !retained[rev] {
			t.Errorf("ConfigMaps %v of revision %s, which is not retained (history %v)", names, rev, historyNames(c))
			continue
		}
		var manifest corev1.ConfigMap
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: c.Namespace, Name: c.RevisionObjectName(rev)}, &manifest); err != nil {
			t.Errorf("revision %s: %v", rev, err)
			continue
		}
		want, err := cmbundle.Names(&manifest)
		if err != nil {
			t.Errorf("revision %s: %v", rev, err)
			continue
		}
		slices.Sort(want)
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("revision %s has ConfigMaps %v, its manifest names %v", rev, names, want)
		}
	}
	var jobs batchv1.JobList
	k8s.List(context.Background(), &jobs, client.InNamespace(c.Namespace), client.MatchingLabels{"parentrag.io/corpus": c.Name})
	for _, j := range jobs.Items {
		if !retained[j.Labels["parentrag.io/revision"]] {
			t.Errorf("Job %s of a revision that is not retained", j.Name)
		}
	}
	var claims corev1.PersistentVolumeClaimList
	k8s.List(context.Background(), &claims, client.InNamespace(c.Namespace), client.MatchingLabels{"parentrag.io/corpus": c.Name})
	for _, pvc := range claims.Items {
		if rev := pvc.Labels["parentrag.io/revision"]; rev != "" && !retained[rev] {
			t.Errorf("claim %s of a revision that is not retained", pvc.Name)
		}
	}
}

// historyNames lists the revisions in a Corpus's history.
func historyNames(c *v1alpha1.Corpus) []string {
	var out []string
	for _, h := range c.Status.History {
		out = append(out, h.Name)
	}
	return out
}

// TestDeletingACorpusUnderItsRetriever deletes the samples' Corpus while
// its Retriever serves it: the Retriever scales its Deployment to zero and
// says why, the real pods go, and only then do the revisions; no pod is
// left to restart into a revision that is gone.
func TestDeletingACorpusUnderItsRetriever(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "delete")
	applyKustomization(t, "config/samples", ns)
	c, r := waitSamplesReady(t, ns)
	if err := k8s.Delete(ctx, c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the Corpus to go, after its query pods", func() (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &v1alpha1.Corpus{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if n := len(revisionConfigMaps(t, ns, c.Name, "")); n == 0 && len(runningPods(t, ns, r.Name)) > 0 {
			t.Fatalf("the revisions were deleted while query pods still ran")
		}
		return false, err
	})
	if pods := runningPods(t, ns, r.Name); len(pods) > 0 {
		t.Fatalf("%d query pods still run after their Corpus went", len(pods))
	}
	if n := len(revisionConfigMaps(t, ns, c.Name, "")); n != 0 {
		t.Fatalf("%d revision ConfigMaps remain", n)
	}
	var d appsv1.Deployment
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(r), &d); err != nil || *d.Spec.Replicas != 0 {
		t.Fatalf("the Deployment: %v, replicas %v", err, d.Spec.Replicas)
	}
	eventually(t, time.Minute, "the Retriever to say its Corpus is gone", func() (bool, error) {
		get(t, r)
		ready := readyCondition(r.Status.Conditions)
		return ready.Reason == v1alpha1.ReasonCorpusNotFound && strings.Contains(ready.Message, "scaled to 0"), fmt.Errorf("%+v", ready)
	})
	t.Logf("Retriever after its Corpus was deleted: Ready=%s %s: %s", readyCondition(r.Status.Conditions).Status, readyCondition(r.Status.Conditions).Reason, readyCondition(r.Status.Conditions).Message)
}

// runningPods lists the Retriever's pods that are not terminating.
func runningPods(t *testing.T, ns, retriever string) []corev1.Pod {
	t.Helper()
	var out []corev1.Pod
	for _, p := range retrieverPods(t, ns, retriever) {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// TestSuspendedObjectsSaySo suspends the samples' Corpus and Retriever and
// edits both: kubectl shows Ready with reason Suspended, kstatus says the
// edit waits, nothing changes in the cluster, and resuming applies it.
func TestSuspendedObjectsSaySo(t *testing.T) {
	ns := newNamespace(t, "suspend")
	applyKustomization(t, "config/samples", ns)
	c, r := waitSamplesReady(t, ns)
	patchCorpus(t, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = true })
	patchCorpus(t, c, func(c *v1alpha1.Corpus) { c.Spec.RetainRevisions = 3 })
	get(t, r)
	patch := client.MergeFrom(r.DeepCopy())
	r.Spec.Suspend, r.Spec.Replicas = true, ptrTo(int32(1))
	if err := k8s.Patch(context.Background(), r, patch); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"corpus/" + c.Name, "retriever/" + r.Name} {
		eventually(t, time.Minute, kind+" to say it is suspended", func() (bool, error) {
			out := kubectl(t, "get", "-n", ns, kind, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}: {.status.conditions[?(@.type=="Ready")].message}`)
			return strings.HasPrefix(out, v1alpha1.ReasonSuspended+": reconciliation is suspended"), fmt.Errorf("%s", out)
		})
	}
	if res := kstatusOf(t, c); res.Status != status.InProgressStatus {
		t.Errorf("kstatus of the suspended, edited Corpus: %s (%s)", res.Status, res.Message)
	}
	var d appsv1.Deployment
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(r), &d); err != nil || *d.Spec.Replicas != 2 {
		t.Fatalf("a suspended Retriever's Deployment changed: replicas %v, %v", d.Spec.Replicas, err)
	}
	patchCorpus(t, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = false })
	get(t, r)
	patch = client.MergeFrom(r.DeepCopy())
	r.Spec.Suspend = false
	if err := k8s.Patch(context.Background(), r, patch); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, time.Minute)
	waitCurrent(t, r, 2*time.Minute)
	t.Logf("resumed:\n%s", kubectl(t, "get", "-n", ns, "corpus,retriever"))
}

// ptrTo returns a pointer to v.
func ptrTo[T any](v T) *T { return &v }
