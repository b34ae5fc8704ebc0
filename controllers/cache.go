package controllers

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheOptions keep the manager's informers to what the operator owns, so
// that its memory and start-up time follow its own objects, not the
// cluster's. Jobs, claims, pods, Deployments, Services, Roles and NetworkPolicies are cached only
// with the operator's managed-by label, ReplicaSets only with a
// Retriever's label. ConfigMaps are informed as metadata only (enough to
// map a source's change to the Corpora that read it) and Secrets not at
// all: ClientOptions reads both from the API server. Namespaces, when
// given, restrict every namespaced informer to them.
func CacheOptions(namespaces ...string) cache.Options {
	owned := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue})
	retrieverRS, _ := labels.NewRequirement(LabelRetriever, selection.Exists, nil)
	o := cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}:                  {Label: owned},
			&corev1.PersistentVolumeClaim{}: {Label: owned},
			&corev1.Pod{}:                   {Label: owned},
			&appsv1.Deployment{}:            {Label: owned},
			&corev1.Service{}:               {Label: owned},
			&rbacv1.Role{}:                  {Label: owned},
			&networkingv1.NetworkPolicy{}:   {Label: owned},
			&appsv1.ReplicaSet{}:            {Label: labels.NewSelector().Add(*retrieverRS)},
		},
	}
	if len(namespaces) > 0 {
		o.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			o.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return o
}

// ClientOptions make the manager's client read ConfigMaps and Secrets from
// the API server rather than from an informer over every one in the
// cluster: a Corpus reads a few named ones, or those of one selector, and
// the revisions' shards are large.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}}}}
}
