package controllers_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
)

// TestOperatorImageOnlyPolicy applies config/policies, bound to one
// namespace of this test so that the suite's other tests keep their
// images: `kubectl apply` of a Retriever with spec.image or a Corpus with
// spec.indexing.image is then refused with a message that names the
// policy, and one without either is accepted.
func TestOperatorImageOnlyPolicy(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	objs, err := devcluster.RenderKustomization(filepath.Join(env.Root, "config", "policies"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "ValidatingAdmissionPolicyBinding" {
			o.SetName(o.GetName() + "-" + ns)
			sel := map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}}
			if err := unstructured.SetNestedField(o.Object, sel, "spec", "matchResources", "namespaceSelector"); err != nil {
				t.Fatal(err)
			}
		}
		if err := k8s.Patch(ctx, o, client.Apply, client.FieldOwner("parentrag-test"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k8s.Delete(ctx, o) })
	}
	p := newPolicy(t, 800, 160)
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "custom"},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "kb"}}}
	rt.Spec.Image = "registry.example/my-own-server:1"
	eventually(t, 30*time.Second, "the policy to refuse a Retriever's image", func() (bool, error) {
		err := k8s.Create(ctx, rt.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "spec.image is not allowed in this cluster"), err
	})
	c := claimCorpus(ns, p.Name)
	c.Spec.Indexing.Image = "registry.example/my-own-indexer:1"
	if err := k8s.Create(ctx, c.DeepCopy(), client.DryRunAll); err == nil || !strings.Contains(err.Error(), "spec.indexing.image is not allowed") {
		t.Errorf("a Corpus with indexing.image: %v, want a refusal", err)
	}
	c.Spec.Indexing.Image = ""
	rt.Spec.Image = ""
	if err := k8s.Create(ctx, c, client.DryRunAll); err != nil {
		t.Errorf("a Corpus without an image is refused: %v", err)
	}
	if err := k8s.Create(ctx, rt, client.DryRunAll); err != nil {
		t.Errorf("a Retriever without an image is refused: %v", err)
	}
}
