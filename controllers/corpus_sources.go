package controllers

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/source"
)

// maxSourceErrors bounds the source errors kept in status.
const maxSourceErrors = 50

// sourceSet is what a Corpus's sources yield: the documents that could be
// read and what could not.
type sourceSet struct {
	docs   []hierarchy.Document
	errors []v1alpha1.SourceError
	seen   map[string]string // document id -> source that gave it
}

// resolveSources reads every source of the Corpus. A source or document
// that cannot be read is reported, not fatal: the rest is indexed. Only an
// error talking to the API server is returned.
func (r *CorpusReconciler) resolveSources(ctx context.Context, c *v1alpha1.Corpus) (*sourceSet, error) {
	set := &sourceSet{seen: map[string]string{}}
	for _, src := range c.Spec.Sources {
		var err error
		switch {
		case len(src.Inline) > 0:
			for _, d := range src.Inline {
				set.add(src.Name, hierarchy.Document{ID: d.ID, Title: d.Title, Text: d.Text})
			}
		case src.ConfigMap != nil:
			err = r.readConfigMapSource(ctx, c.Namespace, src, set)
		case src.Selector != nil:
			err = r.readSelectorSource(ctx, c.Namespace, src, set)
		}
		if err != nil {
			return nil, err
		}
	}
	return set, nil
}

// add keeps a document unless another source already gave its id.
func (s *sourceSet) add(sourceName string, d hierarchy.Document) {
	if other, dup := s.seen[d.ID]; dup {
		s.fail(sourceName, d.ID, fmt.Sprintf("document id %q is also given by source %q; this copy is skipped", d.ID, other))
		return
	}
	s.seen[d.ID] = sourceName
	s.docs = append(s.docs, d)
}

// fail records a problem with a source or one of its documents.
func (s *sourceSet) fail(sourceName, doc, message string) {
	if len(s.errors) < maxSourceErrors {
		s.errors = append(s.errors, v1alpha1.SourceError{Source: sourceName, Document: doc, Message: message})
	}
}

// readConfigMapSource reads the named ConfigMap's keys (or the listed ones)
// as documents.
func (r *CorpusReconciler) readConfigMapSource(ctx context.Context, ns string, src v1alpha1.Source, set *sourceSet) error {
	var cm corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: src.ConfigMap.Name}, &cm)
	if apierrors.IsNotFound(err) {
		set.fail(src.Name, "", fmt.Sprintf("ConfigMap %s not found", src.ConfigMap.Name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading ConfigMap %s: %w", src.ConfigMap.Name, err)
	}
	keys := src.ConfigMap.Keys
	if len(keys) == 0 {
		keys = configMapKeys(&cm)
	}
	for _, key := range keys {
		addConfigMapKey(set, src.Name, &cm, key)
	}
	return nil
}

// readSelectorSource reads every key of every ConfigMap whose labels match,
// except the operator's own revision ConfigMaps.
func (r *CorpusReconciler) readSelectorSource(ctx context.Context, ns string, src v1alpha1.Source, set *sourceSet) error {
	sel, err := metav1.LabelSelectorAsSelector(src.Selector)
	if err != nil {
		set.fail(src.Name, "", fmt.Sprintf("invalid selector: %v", err))
		return nil
	}
	notOurs, _ := labels.NewRequirement(LabelManagedBy, selection.NotEquals, []string{ManagedByValue})
	var list corev1.ConfigMapList
	if err := r.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel.Add(*notOurs)}); err != nil {
		return fmt.Errorf("listing ConfigMaps for source %s: %w", src.Name, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	for i := range list.Items {
		for _, key := range configMapKeys(&list.Items[i]) {
			addConfigMapKey(set, src.Name, &list.Items[i], key)
		}
	}
	return nil
}

// configMapKeys returns the data and binaryData keys, sorted.
func configMapKeys(cm *corev1.ConfigMap) []string {
	keys := make([]string, 0, len(cm.Data)+len(cm.BinaryData))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	for k := range cm.BinaryData {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// addConfigMapKey adds one key as the document "<configmap>/<key>", or
// reports why it cannot be one: missing, binary or not UTF-8.
func addConfigMapKey(set *sourceSet, sourceName string, cm *corev1.ConfigMap, key string) {
	id := cm.Name + "/" + key
	data, ok := []byte(cm.Data[key]), true
	if _, inData := cm.Data[key]; !inData {
		data, ok = cm.BinaryData[key]
	}
	if !ok {
		set.fail(sourceName, id, fmt.Sprintf("ConfigMap %s has no key %q", cm.Name, key))
		return
	}
	if err := source.CheckText(data); err != nil {
		set.fail(sourceName, id, err.Error())
		return
	}
	text := string(data)
	set.add(sourceName, hierarchy.Document{ID: id, Title: source.MarkdownTitle(text), Text: text})
}
