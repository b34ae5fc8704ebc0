package controllers_test

import (
	"context"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

func TestRetrieverNetworkPolicyAdmitsOnlyItsPeers(t *testing.T) {
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)
	chatbots := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "chatbot"}}
	support := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "support"}}
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fenced"},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name},
			NetworkPolicy: &v1alpha1.RetrieverNetworkPolicy{From: []v1alpha1.RetrieverPeer{
				{PodSelector: chatbots}, {NamespaceSelector: support, PodSelector: chatbots}}}}}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	var np networkingv1.NetworkPolicy
	eventually(t, 30*time.Second, "the NetworkPolicy", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rt), &np)
		return err == nil, err
	})
	get(t, rt)
	if !metav1.IsControlledBy(&np, rt) {
		t.Fatalf("NetworkPolicy owners %+v, want the Retriever", np.OwnerReferences)
	}
	spec := np.Spec
	if spec.PodSelector.MatchLabels["app.kubernetes.io/instance"] != "fenced" || len(spec.PolicyTypes) != 1 || spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
		t.Fatalf("NetworkPolicy selects %v with types %v, want the query pods, ingress only", spec.PodSelector, spec.PolicyTypes)
	}
	if len(spec.Ingress) != 1 || len(spec.Ingress[0].Ports) != 1 || spec.Ingress[0].Ports[0].Port.IntValue() != 8080 {
		t.Fatalf("ingress %+v, want one rule on port 8080", spec.Ingress)
	}
	from := spec.Ingress[0].From
	if len(from) != 2 || from[0].NamespaceSelector != nil || from[0].PodSelector.MatchLabels["app"] != "chatbot" ||
		from[1].NamespaceSelector.MatchLabels["team"] != "support" || from[1].PodSelector.MatchLabels["app"] != "chatbot" {
		t.Fatalf("ingress from %+v, want the two peers of the spec", from)
	}

	// Unset, the NetworkPolicy goes.
	updateRetriever(t, rt, func(rt *v1alpha1.Retriever) { rt.Spec.NetworkPolicy = nil })
	eventually(t, 30*time.Second, "the NetworkPolicy to go", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rt), &networkingv1.NetworkPolicy{})
		return apierrors.IsNotFound(err), err
	})
}

func TestAPIServerRefusesAPeerThatSelectsNothing(t *testing.T) {
	ns := newNamespace(t)
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fenced"},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: "c"},
			NetworkPolicy: &v1alpha1.RetrieverNetworkPolicy{From: []v1alpha1.RetrieverPeer{{}}}}}
	expectInvalid(t, toUnstructured(t, rt), "each networkPolicy.from entry needs a namespaceSelector, a podSelector or both")
}
