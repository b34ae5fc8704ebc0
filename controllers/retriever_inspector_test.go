package controllers_test

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
)

// TestRetrieverInspectorReachesTheQueryServer: spec.inspector becomes
// --inspector, and a Retriever without it runs exactly the arguments it
// ran before the field existed.
func TestRetrieverInspectorReachesTheQueryServer(t *testing.T) {
	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "handbook"}}
	rt := &v1alpha1.Retriever{Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "handbook"}}}
	plain := controllers.ServeArgs(rt, c, "rev")
	rt.Spec.Inspector = true
	inspected := controllers.ServeArgs(rt, c, "rev")
	if slices.Contains(plain, "--inspector") || !slices.Equal(inspected, append(plain, "--inspector")) {
		t.Errorf("without the inspector %v, with it %v: want the same arguments and --inspector", plain, inspected)
	}
	if args := controllers.ClaimServeArgs(rt); !slices.Contains(args, "--inspector") {
		t.Errorf("claim args %v lack --inspector", args)
	}
}

// A Retriever turning spec.inspector on and off rolls its Deployment to
// the query server with and without --inspector.
func TestRetrieverInspectorShapesTheDeployment(t *testing.T) {
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "inspected"},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name}}}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	deploymentWith(t, rt, withoutArg("--inspector"))
	updateRetriever(t, rt, func(r *v1alpha1.Retriever) { r.Spec.Inspector = true })
	deploymentWith(t, rt, func(d *appsv1.Deployment) bool { return hasArgs(d, "--inspector") })
	updateRetriever(t, rt, func(r *v1alpha1.Retriever) { r.Spec.Inspector = false })
	deploymentWith(t, rt, withoutArg("--inspector"))
}
