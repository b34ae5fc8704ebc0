package controllers

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch

// loadedRevisions returns, sorted, the Corpus revisions that the query
// ReplicaSets of one Retriever still run: a ReplicaSet that wants or has
// pods runs the revision of its pod template, and any of its pods may
// restart and load that revision again. A pod that is shutting down, no
// longer counted by its ReplicaSet, still answers queries until it ends,
// searching its revision's Milvus collection or Postgres table: its
// revision is loaded too.
func loadedRevisions(ctx context.Context, c client.Reader, namespace, retriever string) ([]string, error) {
	var list appsv1.ReplicaSetList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{LabelRetriever: retriever}); err != nil {
		return nil, fmt.Errorf("listing the query ReplicaSets of Retriever %s: %w", retriever, err)
	}
	seen := map[string]bool{}
	for _, rs := range list.Items {
		rev := rs.Spec.Template.Annotations[revisionAnno]
		if rev == "" || !runsPods(&rs) {
			continue
		}
		seen[rev] = true
	}
	pods, err := podsOf(ctx, c, namespace, map[string]string{LabelRetriever: retriever})
	if err != nil {
		return nil, fmt.Errorf("listing the query pods of Retriever %s: %w", retriever, err)
	}
	for _, p := range pods {
		if rev := p.Annotations[revisionAnno]; rev != "" && !ended(&p) {
			seen[rev] = true
		}
	}
	return sortedKeys(seen), nil
}

// ended reports whether every container of the pod has stopped for good.
func ended(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// runsPods reports whether a ReplicaSet wants pods or still has some.
func runsPods(rs *appsv1.ReplicaSet) bool {
	return rs.Status.Replicas > 0 || rs.Spec.Replicas == nil || *rs.Spec.Replicas > 0
}

// retrieversOf lists the Retrievers that serve Corpus c and are not being
// deleted.
func retrieversOf(ctx context.Context, r client.Reader, c *v1alpha1.Corpus) ([]v1alpha1.Retriever, error) {
	var list v1alpha1.RetrieverList
	if err := r.List(ctx, &list, client.InNamespace(c.Namespace)); err != nil {
		return nil, fmt.Errorf("listing Retrievers: %w", err)
	}
	var out []v1alpha1.Retriever
	for _, rt := range list.Items {
		if rt.Spec.CorpusRef.Name == c.Name && rt.DeletionTimestamp.IsZero() {
			out = append(out, rt)
		}
	}
	return out, nil
}

// revisionsInUse returns the revisions of c that query pods of its
// Retrievers may still load, observed from their ReplicaSets, and the
// Retrievers whose pods still run.
func revisionsInUse(ctx context.Context, r client.Reader, c *v1alpha1.Corpus) (map[string]bool, []string, error) {
	retrievers, err := retrieversOf(ctx, r, c)
	if err != nil {
		return nil, nil, err
	}
	inUse := map[string]bool{}
	var running []string
	for _, rt := range retrievers {
		revs, err := loadedRevisions(ctx, r, c.Namespace, rt.Name)
		if err != nil {
			return nil, nil, err
		}
		for _, rev := range revs {
			inUse[rev] = true
		}
		if len(revs) > 0 {
			running = append(running, rt.Name)
		}
	}
	return inUse, running, nil
}

// sortedKeys returns the keys of a set, sorted.
func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
