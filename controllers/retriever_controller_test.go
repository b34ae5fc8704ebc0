package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
)

// readyCorpus creates a policy and a Corpus and waits until it is Ready.
func readyCorpus(t *testing.T, ns string) (*v1alpha1.ChunkingPolicy, *v1alpha1.Corpus) {
	t.Helper()
	p := newPolicy(t, 800, 160)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	return p, c
}

func TestRetrieverRunsTheActiveRevisionWithLeastPrivilege(t *testing.T) {
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)
	replicas := int32(2)
	rt := &v1alpha1.Retriever{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ask"},
		Spec:       v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name}, MaxParents: 4, Replicas: &replicas},
	}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	eventually(t, 30*time.Second, "the Deployment", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ask"}, &d)
		return err == nil, err
	})
	get(t, rt)
	rev := c.Status.ActiveRevision.Name
	container := d.Spec.Template.Spec.Containers[0]
	if !slices.Equal(container.Args, controllers.ServeArgs(rt, c, rev)) || !slices.Contains(container.Args, "--max-parents=4") {
		t.Fatalf("args %v, want %v", container.Args, controllers.ServeArgs(rt, c, rev))
	}
	if container.Image != "parentrag:test" || *d.Spec.Replicas != 2 || d.Spec.Template.Annotations["parentrag.io/revision"] != rev {
		t.Fatalf("image %q replicas %d annotation %q", container.Image, *d.Spec.Replicas, d.Spec.Template.Annotations["parentrag.io/revision"])
	}
	sc := container.SecurityContext
	if sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || container.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Fatalf("container is not locked down or has no readiness probe: %+v", container)
	}
	var role rbacv1.Role
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ask"}, &role); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, cm := range revisionConfigMaps(t, c, rev) {
		want = append(want, cm.Name)
	}
	got := slices.Clone(role.Rules[0].ResourceNames)
	slices.Sort(got)
	slices.Sort(want)
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Verbs, []string{"get"}) || !slices.Equal(got, want) {
		t.Fatalf("role rules %+v, want get on exactly %v", role.Rules, want)
	}
	var svc corev1.Service
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ask"}, &svc); err != nil || svc.Spec.Ports[0].Port != 8080 {
		t.Fatalf("service %+v, err %v", svc.Spec, err)
	}
	// Without a kubelet no pod becomes ready here: the Retriever says it is
	// rolling out, and kstatus calls it in progress.
	eventually(t, 20*time.Second, "the Retriever to report its rollout", func() (bool, error) {
		res := kstatusOf(t, rt)
		return res.Status == status.InProgressStatus && rt.Status.DesiredRevision == rev && rt.Status.URL == "http://ask."+ns+".svc:8080", nil
	})
}

func TestRetrieverFollowsTheCorpusToANewRevision(t *testing.T) {
	ns := newNamespace(t)
	p, c := readyCorpus(t, ns)
	rt := newRetriever(t, ns, "ask", c.Name)
	first := c.Status.ActiveRevision.Name
	// Pods of the first revision run.
	eventually(t, 30*time.Second, "the Retriever's first status", func() (bool, error) {
		get(t, rt)
		return rt.Status.DesiredRevision == first, nil
	})
	startReplicaSet(t, ns, rt.Name, first)
	get(t, p)
	p.Spec.Child = &v1alpha1.ChunkSize{ChunkSize: 100}
	if err := k8s.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	var second string
	eventually(t, 60*time.Second, "the Deployment to roll to the new revision", func() (bool, error) {
		var d appsv1.Deployment
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ask"}, &d); err != nil {
			return false, err
		}
		second = d.Spec.Template.Annotations["parentrag.io/revision"]
		return second != "" && second != first, nil
	})
	// While the rollout runs, a restarting pod of either revision can load it.
	var want []string
	for _, rev := range []string{first, second} {
		for _, cm := range revisionConfigMaps(t, c, rev) {
			want = append(want, cm.Name)
		}
	}
	slices.Sort(want)
	eventually(t, 30*time.Second, "the Role to cover both revisions", func() (bool, error) {
		var role rbacv1.Role
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ask"}, &role); err != nil {
			return false, err
		}
		got := slices.Clone(role.Rules[0].ResourceNames)
		slices.Sort(got)
		return slices.Equal(got, want), fmt.Errorf("role names %v, want %v", got, want)
	})
}

func TestRetrieverWaitsForItsCorpus(t *testing.T) {
	ns := newNamespace(t)
	rt := &v1alpha1.Retriever{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "early"},
		Spec:       v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "not-yet"}},
	}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "CorpusNotFound", func() (bool, error) {
		get(t, rt)
		ready := meta.FindStatusCondition(rt.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonCorpusNotFound, nil
	})
}

func TestAPIServerRefusesInvalidRetrieversAndCorpora(t *testing.T) {
	ns := newNamespace(t)
	tooMany := &v1alpha1.Retriever{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wide"},
		Spec:       v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "c"}, MaxParents: 21},
	}
	if err := k8s.Create(context.Background(), tooMany); err == nil || !contains(err.Error(), "spec.maxParents") {
		t.Fatalf("maxParents 21 accepted or unclear: %v", err)
	}
	twoKinds := inlineCorpus(ns, "p", sampleDocs()[0])
	twoKinds.Spec.Sources[0].ConfigMap = &v1alpha1.ConfigMapSource{Name: "x"}
	if err := k8s.Create(context.Background(), twoKinds); err == nil || !contains(err.Error(), "exactly one of inline, configMap, selector, url or sourceRef") {
		t.Fatalf("a source with two kinds accepted or unclear: %v", err)
	}
}

// TestRetrieverWaitsWhileItsRevisionIsStoredAgain: when the manifest
// ConfigMap of the revision a Retriever serves is deleted by hand, the
// Retriever says so and keeps its Deployment on that revision, and it
// goes on once the Corpus has stored the revision again.
func TestRetrieverWaitsWhileItsRevisionIsStoredAgain(t *testing.T) {
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)
	rev := c.Status.ActiveRevision.Name
	rt := newRetriever(t, ns, "ask", c.Name)
	eventually(t, 30*time.Second, "the Retriever's first status", func() (bool, error) {
		get(t, rt)
		return rt.Status.DesiredRevision == rev, nil
	})
	// Suspended, the Corpus stores nothing again until it is resumed.
	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = true })
	manifest := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.RevisionObjectName(rev)}}
	if err := k8s.Delete(context.Background(), manifest); err != nil {
		t.Fatal(err)
	}
	updateRetriever(t, rt, func(rt *v1alpha1.Retriever) {
		rt.Annotations = map[string]string{controllers.ReconcileAtAnno: "after-the-deletion"}
	})
	eventually(t, 20*time.Second, "RevisionNotStored", func() (bool, error) {
		get(t, rt)
		ready := meta.FindStatusCondition(rt.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonRevisionNotStored && strings.Contains(ready.Message, manifest.Name), nil
	})
	var d appsv1.Deployment
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ask"}, &d); err != nil || d.Spec.Template.Annotations["parentrag.io/revision"] != rev {
		t.Fatalf("the Deployment left revision %s while its manifest was gone: %v %v", rev, d.Spec.Template.Annotations, err)
	}
	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = false })
	eventually(t, 60*time.Second, "the Retriever to go on once the revision is stored again", func() (bool, error) {
		get(t, rt)
		ready := meta.FindStatusCondition(rt.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonRollingOut, nil
	})
}
