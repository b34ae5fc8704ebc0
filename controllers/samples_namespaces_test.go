package controllers_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/devcluster"
)

// samplePolicyPrefix starts the name of every cluster-scoped object of
// config/samples, so none takes a name a user already has.
const samplePolicyPrefix = "parentrag-sample-"

// kubectlManager is the field manager of `kubectl apply --server-side`.
const kubectlManager = "kubectl"

// TestSamplesComposeAcrossNamespaces applies config/samples into one
// namespace, changes that namespace's chunking the way the samples say to
// (pointing its Corpus at the finer sample policy), then applies the samples
// into a second namespace, server-side as `kubectl apply --server-side -n NS
// -k config/samples` does: the second apply must change no cluster-scoped
// object, so no Corpus of the first namespace rebuilds.
func TestSamplesComposeAcrossNamespaces(t *testing.T) {
	ctx := context.Background()
	objs, err := devcluster.RenderKustomization(filepath.Join(env.Root, "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	first, second := newNamespace(t), newNamespace(t)
	for _, ns := range []string{first, second} {
		t.Cleanup(func() { deleteSampleWorkloads(t, ns, objs) })
	}
	applySamplesInto(t, first, objs)
	corpus := &v1alpha1.Corpus{}
	corpus.Namespace, corpus.Name = first, "parentrag-docs"
	waitCurrent(t, corpus, 2*time.Minute)

	patch := fmt.Sprintf(`{"spec":{"chunkingPolicyRef":{"name":%q}}}`, samplePolicyPrefix+"handbook-fine")
	if err := k8s.Patch(ctx, corpus, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, corpus, 2*time.Minute)
	waitPoliciesCount(t, objs)

	for _, change := range applySamplesInto(t, second, objs) {
		t.Errorf("applying the samples into a second namespace changed cluster-scoped %s", change)
	}
}

// applySamplesInto applies each object server-side as kubectl does,
// namespaced ones into ns, and returns the cluster-scoped objects whose
// resourceVersion the apply moved. Each cluster-scoped object is read just
// before its apply, so only the apply itself is measured.
func applySamplesInto(t *testing.T, ns string, objs []*unstructured.Unstructured) []string {
	t.Helper()
	ctx := context.Background()
	var changed []string
	for _, o := range objs {
		o = o.DeepCopy()
		namespaced, err := k8s.IsObjectNamespaced(o)
		if err != nil {
			t.Fatal(err)
		}
		if namespaced {
			o.SetNamespace(ns)
			applyServerSide(t, o)
			continue
		}
		if !strings.HasPrefix(o.GetName(), samplePolicyPrefix) {
			t.Errorf("cluster-scoped %s %s: its name must start with %s, so it is no user's", o.GetKind(), o.GetName(), samplePolicyPrefix)
		}
		before := o.DeepCopy()
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(o), before); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		applyServerSide(t, o)
		if rv := before.GetResourceVersion(); rv != "" && rv != o.GetResourceVersion() {
			changed = append(changed, fmt.Sprintf("%s %s (resourceVersion %s -> %s)", o.GetKind(), o.GetName(), rv, o.GetResourceVersion()))
		}
	}
	return changed
}

// applyServerSide applies o as `kubectl apply --server-side` and leaves
// the server's answer in o.
func applyServerSide(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	if err := k8s.Patch(context.Background(), o, client.Apply, client.FieldOwner(kubectlManager)); err != nil {
		t.Fatalf("applying %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
	}
}

// waitPoliciesCount waits until every sample policy's status counts the
// Corpora that use it now, so the policy controller writes nothing while the
// second apply is measured.
func waitPoliciesCount(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "ChunkingPolicy" {
			continue
		}
		eventually(t, time.Minute, "ChunkingPolicy "+o.GetName()+" to count its Corpora", func() (bool, error) {
			var corpora v1alpha1.CorpusList
			if err := k8s.List(context.Background(), &corpora); err != nil {
				return false, err
			}
			want := 0
			for _, c := range corpora.Items {
				if c.Spec.ChunkingPolicyRef.Name == o.GetName() {
					want++
				}
			}
			var p v1alpha1.ChunkingPolicy
			if err := k8s.Get(context.Background(), client.ObjectKey{Name: o.GetName()}, &p); err != nil {
				return false, err
			}
			return p.Status.Corpora == want, fmt.Errorf("status.corpora %d, want %d", p.Status.Corpora, want)
		})
	}
}

// deleteSampleWorkloads deletes the samples' Corpora and Retrievers in ns,
// so their finalizers release what they built while the operator runs.
func deleteSampleWorkloads(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	for _, o := range objs {
		if o.GetKind() != "Corpus" && o.GetKind() != "Retriever" {
			continue
		}
		o = o.DeepCopy()
		o.SetNamespace(ns)
		if err := k8s.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting %s %s/%s: %v", o.GetKind(), ns, o.GetName(), err)
		}
	}
}
