package controllers

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
)

// TestCollectGarbageRecordsHistoryBeforeDeleting checks the order of
// garbage collection: the status that no longer names a revision past
// retention is written before the revision's objects are deleted, so an
// operator that stops in between never leaves a history naming a revision
// that is gone.
func TestCollectGarbageRecordsHistoryBeforeDeleting(t *testing.T) {
	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "docs"}}
	old := c.DeepCopy()
	old.Status.History = []v1alpha1.RevisionStatus{{Name: "rev-old"}}
	revisionCM := func(rev string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "docs-" + rev,
			Labels: map[string]string{cmbundle.LabelCorpus: "docs", cmbundle.LabelRevision: rev}}}
	}
	var calls []string
	cl := fake.NewClientBuilder().WithScheme(NewScheme()).
		WithStatusSubresource(&v1alpha1.Corpus{}).
		WithObjects(old, revisionCM("rev-old"), revisionCM("rev-new")).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				var names []string
				for _, h := range obj.(*v1alpha1.Corpus).Status.History {
					names = append(names, h.Name)
				}
				calls = append(calls, "status history="+strings.Join(names, ","))
				return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
			Delete: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				if _, ok := obj.(*corev1.ConfigMap); ok {
					calls = append(calls, "delete "+obj.GetName())
				}
				return cl.Delete(ctx, obj, opts...)
			},
		}).Build()
	r := &CorpusReconciler{Client: cl, Recorder: events.NewFakeRecorder(10)}
	ctx := context.Background()
	// Promotion trimmed the history to the new revision; the server still
	// holds the old history.
	get := old.DeepCopy()
	if err := cl.Get(ctx, client.ObjectKeyFromObject(old), get); err != nil {
		t.Fatal(err)
	}
	base := get.DeepCopy()
	get.Status.History = []v1alpha1.RevisionStatus{{Name: "rev-new"}}
	s := &corpusState{corpus: get, revision: "rev-new", progress: r.newProgressPatcher(ctx, get, base)}
	if _, err := r.collectGarbage(ctx, s); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0] != "status history=rev-new" || !strings.HasPrefix(calls[1], "delete ") || !strings.Contains(calls[1], "rev-old") {
		t.Fatalf("calls = %q, want the status naming only rev-new patched, then rev-old deleted", calls)
	}
	var left corev1.ConfigMapList
	if err := cl.List(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 1 || left.Items[0].Name != "docs-rev-new" {
		t.Fatalf("ConfigMaps left: %v, want docs-rev-new", left.Items)
	}
}
