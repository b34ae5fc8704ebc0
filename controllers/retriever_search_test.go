package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
)

// TestRetrieverSearchReachesTheQueryServer: the search mode and fusion
// become the query server's flags, and a Retriever without them runs the
// arguments it ran before the field existed.
func TestRetrieverSearchReachesTheQueryServer(t *testing.T) {
	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "handbook"}}
	rt := &v1alpha1.Retriever{Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "handbook"}}}
	plain := controllers.ServeArgs(rt, c, "rev")
	if slices.ContainsFunc(plain, func(a string) bool { return strings.HasPrefix(a, "--search") || strings.HasPrefix(a, "--rrf") }) {
		t.Fatalf("a Retriever without search runs %v", plain)
	}
	rt.Spec.Search = &v1alpha1.RetrieverSearch{Mode: v1alpha1.SearchHybrid, Fusion: &v1alpha1.RetrieverFusion{K: 30, DenseWeight: "0.5"}}
	args := controllers.ServeArgs(rt, c, "rev")
	for _, want := range []string{"--search=Hybrid", "--rrf-k=30", "--dense-weight=0.5"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
}

// TestDenseSearchOverBM25AloneStalls: a Retriever asking for the model's
// vectors of a Corpus that has none says what to change.
func TestDenseSearchOverBM25AloneStalls(t *testing.T) {
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dense"}, Spec: v1alpha1.RetrieverSpec{
		CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name}, Search: &v1alpha1.RetrieverSearch{Mode: v1alpha1.SearchDense}}}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Retriever to stall", func() (bool, error) {
		get(t, rt)
		st := meta.FindStatusCondition(rt.Status.Conditions, v1alpha1.ConditionStalled)
		return st != nil && st.Reason == v1alpha1.ReasonSearchMode && strings.Contains(st.Message, "embedding.openAI"), fmt.Errorf("Stalled %+v", st)
	})
}
