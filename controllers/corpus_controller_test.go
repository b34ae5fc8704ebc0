package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

func TestCorpusIndexesInlineDocumentsIntoImmutableConfigMaps(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	a := c.Status.ActiveRevision
	if a == nil || a.Documents != 3 || a.Parents < 3 || a.Children <= a.Parents || a.Bytes == 0 {
		t.Fatalf("active revision %+v: want 3 documents, parents and more children", a)
	}
	if a.PolicyRevision != p.Spec.Revision() || len(c.Status.History) != 1 || c.Status.Progress != nil {
		t.Fatalf("status %+v: want the policy's revision, one history entry and no progress", c.Status)
	}
	if !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionSourcesReady) {
		t.Fatalf("SourcesReady not True: %+v", c.Status.Conditions)
	}
	cms := revisionConfigMaps(t, c, a.Name)
	if len(cms) != a.ConfigMaps || len(cms) < 2 {
		t.Fatalf("%d ConfigMaps for revision %s, status says %d", len(cms), a.Name, a.ConfigMaps)
	}
	for _, cm := range cms {
		owner := metav1.GetControllerOf(&cm)
		if cm.Immutable == nil || !*cm.Immutable || owner == nil || owner.UID != c.UID {
			t.Fatalf("ConfigMap %s is not immutable or not owned by the Corpus", cm.Name)
		}
	}
	var manifest corev1.ConfigMap
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.RevisionObjectName(a.Name)}, &manifest); err != nil {
		t.Fatalf("no manifest ConfigMap named after the revision: %v", err)
	}
}

func TestPolicyChangeBuildsANewRevisionBesideTheOld(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	c.Spec.RetainRevisions = 2
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	revisions := []string{c.Status.ActiveRevision.Name}
	for _, child := range []int{120, 90} {
		get(t, p)
		p.Spec.Child = &v1alpha1.ChunkSize{ChunkSize: child, ChunkOverlap: 10}
		if err := k8s.Update(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		prev := revisions[len(revisions)-1]
		eventually(t, 60*time.Second, "a new active revision", func() (bool, error) {
			get(t, c)
			return c.Status.ActiveRevision != nil && c.Status.ActiveRevision.Name != prev && meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionReady), nil
		})
		revisions = append(revisions, c.Status.ActiveRevision.Name)
	}
	waitCurrent(t, c, 30*time.Second)
	if len(c.Status.History) != 2 || c.Status.History[0].Name != revisions[2] || c.Status.History[1].Name != revisions[1] {
		t.Fatalf("history %+v, want the last two revisions newest first", c.Status.History)
	}
	eventually(t, 20*time.Second, "the oldest revision to be collected", func() (bool, error) {
		return len(revisionConfigMaps(t, c, revisions[0])) == 0 && len(revisionConfigMaps(t, c, revisions[1])) > 0 && len(revisionConfigMaps(t, c, revisions[2])) > 0, nil
	})
}

func TestSourceProblemsAreReportedAndTheRestIndexed(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "handbook"},
		Data:       map[string]string{"good.md": "# Good\n\nA readable page about tide tables and harbours."},
		BinaryData: map[string][]byte{"image.png": {0x89, 'P', 'N', 'G', 0, 0, 0}},
	}
	if err := k8s.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	c := inlineCorpus(ns, p.Name, sampleDocs()[0])
	c.Spec.Sources = append(c.Spec.Sources,
		v1alpha1.Source{Name: "handbook", ConfigMap: &v1alpha1.ConfigMapSource{Name: "handbook"}},
		v1alpha1.Source{Name: "missing", ConfigMap: &v1alpha1.ConfigMapSource{Name: "does-not-exist"}})
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	if c.Status.ActiveRevision.Documents != 2 {
		t.Fatalf("indexed %d documents, want the inline one and handbook/good.md", c.Status.ActiveRevision.Documents)
	}
	errs := map[string]string{}
	for _, e := range c.Status.SourceErrors {
		errs[e.Source+"|"+e.Document] = e.Message
	}
	if !strings.Contains(errs["handbook|handbook/image.png"], "binary") || !strings.Contains(errs["missing|"], "not found") {
		t.Fatalf("source errors %+v: want the binary key and the missing ConfigMap", c.Status.SourceErrors)
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionSourcesReady); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Fatalf("SourcesReady = %+v, want False", cond)
	}
}

func TestCorpusWithoutDocumentsStallsUntilASourceAppears(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name)
	c.Spec.Sources = []v1alpha1.Source{{Name: "pages", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"corpus": "pages"}}}}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Corpus to stall", func() (bool, error) {
		return kstatusOf(t, c).Status == status.FailedStatus &&
			meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionStalled), nil
	})
	if cond := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionStalled); cond.Reason != v1alpha1.ReasonNoDocuments {
		t.Fatalf("stalled for %s, want %s", cond.Reason, v1alpha1.ReasonNoDocuments)
	}
	page := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "page-1", Labels: map[string]string{"corpus": "pages"}},
		Data:       map[string]string{"intro.md": "# Intro\n\nThe first page of the handbook."},
	}
	if err := k8s.Create(context.Background(), page); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	if c.Status.ActiveRevision.Documents != 1 {
		t.Fatalf("indexed %d documents, want the selected page", c.Status.ActiveRevision.Documents)
	}
}

func TestMissingPolicyIsWaitedFor(t *testing.T) {
	ns := newNamespace(t)
	name := uniqueName("later")
	c := inlineCorpus(ns, name, sampleDocs()...)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "PolicyNotFound", func() (bool, error) {
		get(t, c)
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonPolicyNotFound && !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ConditionStalled), nil
	})
	p := &v1alpha1.ChunkingPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8s.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
}

func TestDeletingACorpusRemovesItsRevisions(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	if len(revisionConfigMaps(t, c, "")) == 0 {
		t.Fatal("no revision ConfigMaps before deletion")
	}
	if err := k8s.Delete(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Corpus and its ConfigMaps to go", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)
		return apierrors.IsNotFound(err) && len(revisionConfigMaps(t, c, "")) == 0, err
	})
}
