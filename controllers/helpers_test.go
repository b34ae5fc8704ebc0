package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

var nameSeq atomic.Int64

// uniqueName returns a name no other test uses.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, nameSeq.Add(1))
}

// newNamespace creates a namespace for one test.
func newNamespace(tb testing.TB) string {
	tb.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("test")}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		tb.Fatal(err)
	}
	return ns.Name
}

// newPolicy creates a ParentChild policy with the given sizes.
func newPolicy(t *testing.T, parent, child int) *v1alpha1.ChunkingPolicy {
	t.Helper()
	return createPolicyIn(t, k8s, parent, child)
}

// inlineCorpus is a Corpus of inline documents.
func inlineCorpus(ns, policy string, docs ...v1alpha1.InlineDocument) *v1alpha1.Corpus {
	return &v1alpha1.Corpus{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uniqueName("corpus")},
		Spec: v1alpha1.CorpusSpec{
			ChunkingPolicyRef: v1alpha1.PolicyReference{Name: policy},
			Sources:           []v1alpha1.Source{{Name: "inline", Inline: docs}},
		},
	}
}

// sampleDocs are three short documents on distinct subjects.
func sampleDocs() []v1alpha1.InlineDocument {
	para := func(topic string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "Paragraph %d about %s explains how %s works in practice and why it matters.\n\n", i, topic, topic)
		}
		return b.String()
	}
	return []v1alpha1.InlineDocument{
		{ID: "volcanoes", Title: "Volcanoes", Text: "# Volcanoes\n\n" + para("magma eruptions", 12)},
		{ID: "tides", Title: "Tides", Text: "# Tides\n\n" + para("lunar gravity and tides", 12)},
		{ID: "bread", Title: "Bread", Text: "# Bread\n\n" + para("yeast fermentation", 12)},
	}
}

// revisionConfigMaps lists the ConfigMaps of a Corpus's revision.
func revisionConfigMaps(t *testing.T, c *v1alpha1.Corpus, revision string) []corev1.ConfigMap {
	t.Helper()
	var list corev1.ConfigMapList
	sel := client.MatchingLabels{"parentrag.io/corpus": c.Name}
	if revision != "" {
		sel["parentrag.io/revision"] = revision
	}
	if err := k8s.List(context.Background(), &list, client.InNamespace(c.Namespace), sel); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// get refreshes obj from the API server.
func get(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
}

// contains reports whether s holds sub.
func contains(s, sub string) bool { return strings.Contains(s, sub) }

// newRetriever creates a Retriever with default settings over a Corpus.
func newRetriever(t *testing.T, ns, name, corpus string) *v1alpha1.Retriever {
	t.Helper()
	rt := &v1alpha1.Retriever{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: corpus}},
	}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	return rt
}

// watchReady records every status of the Corpus's Ready condition, with
// its reason, as a watch delivers them, until the returned function is
// called; it returns what was seen.
func watchReady(t *testing.T, c *v1alpha1.Corpus) func() []string {
	t.Helper()
	return watchCorpus(t, c, func(got *v1alpha1.Corpus) (string, bool) {
		ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
		if ready == nil {
			return "", false
		}
		return fmt.Sprintf("%s/%s", ready.Status, ready.Reason), true
	})
}

// watchCorpus records what observe reads from each version of the Corpus
// a watch delivers (the versions it accepts), until the returned function
// is called; it returns what was seen, in order.
func watchCorpus(t *testing.T, c *v1alpha1.Corpus, observe func(*v1alpha1.Corpus) (string, bool)) func() []string {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &v1alpha1.CorpusList{}, client.InNamespace(c.Namespace),
		client.MatchingFields{"metadata.name": c.Name})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if got, ok := ev.Object.(*v1alpha1.Corpus); ok {
				if v, ok := observe(got); ok {
					seen = append(seen, v)
				}
			}
		}
	}()
	return func() []string {
		w.Stop()
		<-done
		return seen
	}
}
