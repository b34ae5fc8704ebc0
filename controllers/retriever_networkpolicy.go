package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete

// networkPolicyObjects are the NetworkPolicy of spec.networkPolicy, none
// when it is unset.
func (p *queryPlan) networkPolicyObjects() []runtime.ApplyConfiguration {
	np := p.retriever.Spec.NetworkPolicy
	if np == nil {
		return nil
	}
	rule := networkingv1ac.NetworkPolicyIngressRule().
		WithPorts(networkingv1ac.NetworkPolicyPort().WithProtocol(corev1.ProtocolTCP).WithPort(intstr.FromInt32(serverPort)))
	for _, peer := range np.From {
		rule.WithFrom(networkPeer(peer))
	}
	return []runtime.ApplyConfiguration{
		networkingv1ac.NetworkPolicy(p.retriever.Name, p.retriever.Namespace).
			WithLabels(p.labels()).WithOwnerReferences(p.owner()).
			WithSpec(networkingv1ac.NetworkPolicySpec().
				WithPodSelector(metav1ac.LabelSelector().WithMatchLabels(p.selectorLabels())).
				WithPolicyTypes(networkingv1.PolicyTypeIngress).
				WithIngress(rule)),
	}
}

// networkPeer is a Retriever peer as a NetworkPolicy peer.
func networkPeer(peer v1alpha1.RetrieverPeer) *networkingv1ac.NetworkPolicyPeerApplyConfiguration {
	out := networkingv1ac.NetworkPolicyPeer()
	if peer.NamespaceSelector != nil {
		out.WithNamespaceSelector(labelSelector(peer.NamespaceSelector))
	}
	if peer.PodSelector != nil {
		out.WithPodSelector(labelSelector(peer.PodSelector))
	}
	return out
}

// labelSelector is a label selector as an apply configuration.
func labelSelector(s *metav1.LabelSelector) *metav1ac.LabelSelectorApplyConfiguration {
	out := metav1ac.LabelSelector().WithMatchLabels(s.MatchLabels)
	for _, e := range s.MatchExpressions {
		out.WithMatchExpressions(metav1ac.LabelSelectorRequirement().
			WithKey(e.Key).WithOperator(e.Operator).WithValues(e.Values...))
	}
	return out
}

// removeNetworkPolicy deletes the NetworkPolicy the Retriever controls
// once spec.networkPolicy is unset; it does nothing when there is none.
func (r *RetrieverReconciler) removeNetworkPolicy(ctx context.Context, rt *v1alpha1.Retriever) error {
	if rt.Spec.NetworkPolicy != nil {
		return nil
	}
	var np networkingv1.NetworkPolicy
	err := r.Get(ctx, client.ObjectKeyFromObject(rt), &np)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading NetworkPolicy: %w", err)
	}
	if !metav1.IsControlledBy(&np, rt) {
		return nil // someone else's, of the same name
	}
	if err := r.Delete(ctx, &np); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting NetworkPolicy: %w", err)
	}
	return nil
}
