package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// sourceRefCorpus is a Corpus with one sourceRef source.
func sourceRefCorpus(ns, policy string, ref v1alpha1.SourceReference) *v1alpha1.Corpus {
	c := inlineCorpus(ns, policy)
	c.Spec.Sources = []v1alpha1.Source{{Name: "handbook", SourceRef: &ref}}
	return c
}

// TestAPIServerRefusesBadSourceRefs: a kind Flux's source-controller does
// not make, a path out of the artifact, a second source field and an
// indexing Job are refused with messages that say what to write.
func TestAPIServerRefusesBadSourceRefs(t *testing.T) {
	ns := newNamespace(t)
	git := v1alpha1.SourceReference{Kind: v1alpha1.SourceRefGitRepository, Name: "handbook"}
	for name, tc := range map[string]struct {
		mutate func(*unstructured.Unstructured)
		want   string
	}{
		"kind":                     {func(u *unstructured.Unstructured) { setSource(u, "kind", "HelmChart") }, `supported values: "GitRepository", "OCIRepository", "Bucket", "ExternalArtifact"`},
		"path out of the artifact": {func(u *unstructured.Unstructured) { setSource(u, "path", "docs/../../etc") }, "path is a folder inside the artifact: relative, without '..'"},
		"absolute path":            {func(u *unstructured.Unstructured) { setSource(u, "path", "/docs") }, "path is a folder inside the artifact"},
		"two fields": {func(u *unstructured.Unstructured) {
			sources, _, _ := unstructured.NestedSlice(u.Object, "spec", "sources")
			sources[0].(map[string]any)["url"] = map[string]any{"url": "https://example.com/docs.tar.gz"}
			_ = unstructured.SetNestedSlice(u.Object, sources, "spec", "sources")
		}, "a source sets exactly one of inline, configMap, selector, url or sourceRef"},
		"indexing Job": {func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "Job", "spec", "indexing", "mode")
			_ = unstructured.SetNestedField(u.Object, "1Gi", "spec", "parentStore", "persistentVolumeClaim", "size")
		}, "a sourceRef source is read by the operator and indexing.mode Job does not take one yet"},
	} {
		t.Run(name, func(t *testing.T) {
			u := toUnstructured(t, sourceRefCorpus(ns, "any", git))
			tc.mutate(u)
			expectInvalid(t, u, tc.want)
		})
	}
}

// setSource sets a field of the first source's sourceRef.
func setSource(u *unstructured.Unstructured, field, value string) {
	sources, _, _ := unstructured.NestedSlice(u.Object, "spec", "sources")
	sources[0].(map[string]any)["sourceRef"].(map[string]any)[field] = value
	_ = unstructured.SetNestedSlice(u.Object, sources, "spec", "sources")
}

// TestSourceRefWithoutFluxWaits: this suite installs no Flux CRDs, as a
// cluster without Flux; the operator runs, and a Corpus that refers to a
// GitRepository waits, saying that the kind is not installed, in progress
// for kstatus rather than failed.
func TestSourceRefWithoutFluxWaits(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := sourceRefCorpus(ns, p.Name, v1alpha1.SourceReference{Kind: v1alpha1.SourceRefGitRepository, Name: "handbook", Path: "./docs"})
	if err := k8s.Create(context.Background(), c); err != nil {
		if apierrors.IsInvalid(err) {
			t.Fatalf("a valid sourceRef was refused: %v", err)
		}
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Corpus to wait for its GitRepository", func() (bool, error) {
		get(t, c)
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonSourceNotFound, nil
	})
	ready := condition(c, v1alpha1.ConditionReady)
	want := "source handbook: GitRepository " + ns + "/handbook cannot be read: the kind GitRepository of source.toolkit.fluxcd.io/v1 is not installed in the cluster (install Flux's source-controller)"
	if ready.Status != "False" || ready.Message != want {
		t.Fatalf("Ready %s %q, want False %q", ready.Status, ready.Message, want)
	}
	if res := kstatusOf(t, c); res.Status != status.InProgressStatus {
		t.Fatalf("kstatus %s (%s), want InProgress: the Corpus waits, it has not failed", res.Status, res.Message)
	}
	if !strings.Contains(condition(c, v1alpha1.ConditionReconciling).Message, "not installed") {
		t.Fatalf("Reconciling %+v", condition(c, v1alpha1.ConditionReconciling))
	}
}
