//go:build cluster

package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// TestClaimsSampleIsBuiltByAJobAndServedFromItsClaim applies
// config/samples and then config/samples/claims: the operator, under its
// shipped RBAC, gives the indexer its Role, a real Job builds the revision
// onto a real claim that the cluster's provisioner binds, and real query
// pods serve it with the claim mounted read-only. The operator is killed
// while the Job runs; the build completes and nothing leaks.
func TestClaimsSampleIsBuiltByAJobAndServedFromItsClaim(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "claims")
	applyKustomization(t, "config/samples", ns)
	waitSamplesReady(t, ns)
	applyKustomization(t, "config/samples/claims", ns)

	c := &v1alpha1.Corpus{}
	c.Namespace, c.Name = ns, samplesCorpus
	var job batchv1.Job
	eventually(t, 2*time.Minute, "the indexing Job", func() (bool, error) {
		var jobs batchv1.JobList
		err := k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{"parentrag.io/corpus": samplesCorpus})
		if err == nil && len(jobs.Items) > 0 {
			job = jobs.Items[0]
			return true, nil
		}
		get(t, c)
		return false, fmt.Errorf("%v (conditions %v)", err, c.Status.Conditions)
	})
	killOperator(t)

	c, r := waitSamplesReady(t, ns)
	a := c.Status.ActiveRevision
	if !c.UsesClaims() || a.Name != job.Labels["parentrag.io/revision"] {
		t.Fatalf("active revision %s, want the Job's %s", a.Name, job.Labels["parentrag.io/revision"])
	}
	get(t, &job)
	if job.Status.Succeeded != 1 || job.Spec.Template.Spec.ServiceAccountName != samplesCorpus+"-indexer" {
		t.Fatalf("Job %s: succeeded %d, service account %s", job.Name, job.Status.Succeeded, job.Spec.Template.Spec.ServiceAccountName)
	}
	claim := &corev1.PersistentVolumeClaim{}
	claim.Namespace, claim.Name = ns, c.RevisionObjectName(a.Name)
	get(t, claim)
	if claim.Status.Phase != corev1.ClaimBound || claim.Spec.VolumeName == "" {
		t.Fatalf("claim %s is %s (volume %q)", claim.Name, claim.Status.Phase, claim.Spec.VolumeName)
	}
	// The overlay set the operator's image alone; the Job and the query
	// pods run it too.
	if img := job.Spec.Template.Spec.Containers[0].Image; img != image {
		t.Errorf("the indexing Job runs %s, want the operator's image %s", img, image)
	}
	for _, p := range waitOnlyRevision(t, ns, r.Name, a.Name) {
		if !mountsClaimReadOnly(&p, claim.Name) {
			t.Errorf("query pod %s does not mount claim %s read-only: %+v", p.Name, claim.Name, p.Spec.Volumes)
		}
		if img := p.Spec.Containers[0].Image; img != image {
			t.Errorf("query pod %s runs %s, want the operator's image %s", p.Name, img, image)
		}
	}
	e := endpointOf(t, ns, r.Name)
	e.waitAnswering(t)
	resp, err := e.retrieve(ctx, docsQuestions[0], 3)
	if err != nil || resp.Revision != a.Name || len(resp.Results) == 0 {
		t.Fatalf("query through the Service: %+v, %v; want revision %s", resp, err, a.Name)
	}
	checkNoLeaks(t, c)
	t.Logf("Job %s built revision %s (%d parents, %d children) onto claim %s (volume %s); %d query pods serve it read-only; %q answered from %s",
		job.Name, a.Name[:8], a.Parents, a.Children, claim.Name, claim.Spec.VolumeName, len(retrieverPods(t, ns, r.Name)), docsQuestions[0], resp.Results[0].DocID)
	checkOneEditSplitsOneDocument(t, ctx, c, r, e)
}

// checkOneEditSplitsOneDocument adds a sentence to one page of the docs
// ConfigMap, as a user editing it would, and requires the next Job to take
// every other document from the unit cache on the cache claim, the
// Corpus's status to say so, and the Service to answer with the new text.
func checkOneEditSplitsOneDocument(t *testing.T, ctx context.Context, c *v1alpha1.Corpus, r *v1alpha1.Retriever, e *serviceEndpoint) {
	t.Helper()
	before := c.Status.ActiveRevision
	const sentence = "Quokkas guard the marmalade lighthouse of this edited page."
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = c.Namespace, samplesCorpus
	get(t, cm)
	patch := client.MergeFrom(cm.DeepCopy())
	cm.Data["cli.md"] += "\n" + sentence + "\n"
	if err := k8s.Patch(ctx, cm, patch); err != nil {
		t.Fatal(err)
	}
	rev := waitServedAfter(t, c, r, before.Name)
	get(t, c)
	lb := c.Status.LastBuild
	if lb == nil || lb.Revision != rev || lb.Mode != v1alpha1.IndexingJob || lb.UnitCache == nil ||
		lb.UnitCache.Split != 1 || lb.UnitCache.Reused != before.Documents-1 {
		t.Fatalf("after one edited page, lastBuild %+v (unit cache %+v): want a Job that split 1 document and reused %d", lb, lb.UnitCache, before.Documents-1)
	}
	waitOnlyRevision(t, c.Namespace, r.Name, rev)
	resp, err := e.retrieve(ctx, "quokkas marmalade lighthouse", 1)
	if err != nil || resp.Revision != rev || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, sentence) {
		t.Fatalf("query for the edited sentence: %+v, %v; want revision %s to answer with it", resp, err, rev)
	}
	t.Logf("one edited page: Job built %s, split %d and reused %d documents; the Service answered from %s", rev[:8], lb.UnitCache.Split, lb.UnitCache.Reused, resp.Results[0].DocID)
}

// mountsClaimReadOnly reports whether the pod mounts the claim read-only.
func mountsClaimReadOnly(p *corev1.Pod, claim string) bool {
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claim {
			continue
		}
		for _, m := range p.Spec.Containers[0].VolumeMounts {
			if m.Name == v.Name && m.ReadOnly {
				return true
			}
		}
	}
	return false
}
