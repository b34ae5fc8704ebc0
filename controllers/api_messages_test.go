package controllers_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// TestAPIServerRefusesOversizedInlineText: an inline document too large
// for etcd is refused by the schema with a message that says the limit,
// not by etcd with "request is too large".
func TestAPIServerRefusesOversizedInlineText(t *testing.T) {
	ns := newNamespace(t)
	for _, tc := range []struct {
		name  string
		docs  []v1alpha1.InlineDocument
		split bool
		want  []string
	}{
		{"one document of 2 MB", []v1alpha1.InlineDocument{{ID: "big", Text: strings.Repeat("x", 2<<20)}},
			false, []string{"spec.sources[0].inline[0].text", "1048576"}},
		{"two documents of 600 KB", []v1alpha1.InlineDocument{{ID: "a", Text: strings.Repeat("x", 600<<10)}, {ID: "b", Text: strings.Repeat("y", 600<<10)}},
			false, []string{"the inline documents of one source hold more than 1048576 characters (1 MiB) of text", "ConfigMap"}},
		{"two sources of 600 KB", []v1alpha1.InlineDocument{{ID: "a", Text: strings.Repeat("x", 600<<10)}, {ID: "b", Text: strings.Repeat("y", 600<<10)}},
			true, []string{"the inline documents of all sources hold more than 1048576 characters (1 MiB) of text"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := inlineCorpus(ns, "any", tc.docs...)
			if tc.split {
				// The same documents, one source each.
				c.Spec.Sources = []v1alpha1.Source{{Name: "a", Inline: tc.docs[:1]}, {Name: "b", Inline: tc.docs[1:]}}
			}
			err := k8s.Create(context.Background(), c)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create returned %v, want Invalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestAPIServerExplainsBadQuantities: a claim size that is no quantity
// is refused with a message that gives an example, besides the schema's
// pattern.
func TestAPIServerExplainsBadQuantities(t *testing.T) {
	ns := newNamespace(t)
	c := inlineCorpus(ns, "any", sampleDocs()...)
	c.Spec.ParentStore = &v1alpha1.ParentStore{PersistentVolumeClaim: &v1alpha1.PersistentVolumeClaimParentStore{Size: resource.MustParse("1Gi")}}
	c.Spec.Indexing = &v1alpha1.Indexing{Mode: v1alpha1.IndexingJob}
	u := toUnstructured(t, c)
	if err := unstructured.SetNestedField(u.Object, "10 GB", "spec", "parentStore", "persistentVolumeClaim", "size"); err != nil {
		t.Fatal(err)
	}
	expectInvalid(t, u, "size must be a quantity such as 10Gi")
	expectNoPattern(t, u)
}

// A bad CPU or memory quantity in a Retriever's or a Corpus's resources,
// or in a source's size limits, is refused with a message giving
// examples, not the regular expression of a quantity.
func TestAPIServerExplainsBadResourceQuantities(t *testing.T) {
	ns := newNamespace(t)
	r := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"}, Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "any"}}}
	u := toUnstructured(t, r)
	if err := unstructured.SetNestedStringMap(u.Object, map[string]string{"cpu": "2 cores", "memory": "1Gi"}, "spec", "resources", "requests"); err != nil {
		t.Fatal(err)
	}
	expectInvalid(t, u, `spec.resources.requests[cpu]: Invalid value: "2 cores": must be a quantity, such as 500m or 2 (CPU) or 512Mi or 10Gi (bytes)`)
	expectNoPattern(t, u)

	c := inlineCorpus(ns, "any", sampleDocs()...)
	c.Spec.Indexing = &v1alpha1.Indexing{Mode: v1alpha1.IndexingJob}
	u = toUnstructured(t, c)
	if err := unstructured.SetNestedStringMap(u.Object, map[string]string{"memory": "4 GB"}, "spec", "indexing", "resources", "limits"); err != nil {
		t.Fatal(err)
	}
	expectInvalid(t, u, `spec.indexing.resources.limits[memory]: Invalid value: "4 GB": must be a quantity`)
	expectNoPattern(t, u)
}

// expectNoPattern creates u, which must be refused, and wants no regular
// expression in the message.
func expectNoPattern(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	if err := k8s.Create(context.Background(), u); err == nil || strings.Contains(err.Error(), "should match") {
		t.Errorf("the API server's answer shows a pattern: %v", err)
	}
}

// toUnstructured converts obj, with its kind, so a test can set a field
// to what Go types cannot hold.
func toUnstructured(t *testing.T, obj client.Object) *unstructured.Unstructured {
	t.Helper()
	gvk, _, err := k8s.Scheme().ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := k8s.Scheme().Convert(obj, u, nil); err != nil {
		t.Fatal(err)
	}
	u.SetGroupVersionKind(gvk[0])
	return u
}

// expectInvalid creates u and wants it refused with want in the message.
func expectInvalid(t *testing.T, u *unstructured.Unstructured, want string) {
	t.Helper()
	err := k8s.Create(context.Background(), u)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("create %s returned %v, want Invalid", u.GetKind(), err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

// A URL source's maxTotalSize is at most 4Gi and its maxFileSize at most
// 64Mi: past them, or not a quantity, the API server refuses the Corpus
// with a message that says the bound; at the bounds it is accepted.
func TestAPIServerBoundsRemoteSourceSizes(t *testing.T) {
	ns := newNamespace(t)
	corpus := func(field, value string) *unstructured.Unstructured {
		c := inlineCorpus(ns, "any", sampleDocs()...)
		c.Spec.Sources = []v1alpha1.Source{{Name: "site", URL: &v1alpha1.URLSource{URL: "https://docs.example.com/site.tar.gz"}}}
		u := toUnstructured(t, c)
		sources, _, _ := unstructured.NestedSlice(u.Object, "spec", "sources")
		sources[0].(map[string]any)["url"].(map[string]any)[field] = value
		if err := unstructured.SetNestedSlice(u.Object, sources, "spec", "sources"); err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, c := range []struct{ field, value, want string }{
		{"maxTotalSize", "5Gi", "maxTotalSize must be a quantity of at most 4Gi"},
		{"maxTotalSize", "1Ti", "maxTotalSize must be a quantity of at most 4Gi"},
		{"maxTotalSize", "10 GB", "maxTotalSize must be a quantity of at most 4Gi"},
		{"maxFileSize", "65Mi", "maxFileSize must be a quantity of at most 64Mi"},
	} {
		expectInvalid(t, corpus(c.field, c.value), c.want)
	}
	for field, value := range map[string]string{"maxTotalSize": "4Gi", "maxFileSize": "64Mi"} {
		if err := k8s.Create(context.Background(), corpus(field, value), client.DryRunAll); err != nil {
			t.Errorf("%s %s: %v, want it accepted", field, value, err)
		}
	}
}
