package sourceset

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
	"github.com/parentrag/parentrag/internal/document"
)

// LabelManagedBy set to ManagedByValue marks the operator's own objects;
// selector sources never read such ConfigMaps.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "parentrag"
)

// fetchedSource is what a ConfigMap or selector source fetched: its
// ConfigMaps, in the order their documents are added, or why it has none.
type fetchedSource struct {
	cms     []*corev1.ConfigMap
	problem string // a missing ConfigMap or an invalid selector
}

// fetchConfigMapSource fetches the ConfigMaps of a ConfigMap or selector
// source. Only an error talking to the API server is returned.
func (r *Reader) fetchConfigMapSource(ctx context.Context, src v1alpha1.Source) (fetchedSource, error) {
	if src.ConfigMap != nil {
		return r.fetchConfigMap(ctx, src.ConfigMap.Name)
	}
	return r.fetchSelector(ctx, src)
}

// fetchConfigMap fetches the named ConfigMap; a missing one is a problem.
func (r *Reader) fetchConfigMap(ctx context.Context, name string) (fetchedSource, error) {
	cm, err := r.getConfigMap(ctx, name)
	if apierrors.IsNotFound(err) {
		return fetchedSource{problem: fmt.Sprintf("ConfigMap %s not found", name)}, nil
	}
	if err != nil {
		return fetchedSource{}, fmt.Errorf("reading ConfigMap %s: %w", name, err)
	}
	return fetchedSource{cms: []*corev1.ConfigMap{cm}}, nil
}

// fetchSelector fetches every ConfigMap whose labels match, except the
// operator's own, by name.
func (r *Reader) fetchSelector(ctx context.Context, src v1alpha1.Source) (fetchedSource, error) {
	sel, err := metav1.LabelSelectorAsSelector(src.Selector)
	if err != nil {
		return fetchedSource{problem: fmt.Sprintf("invalid selector: %v", err)}, nil
	}
	notOurs, _ := labels.NewRequirement(LabelManagedBy, selection.NotEquals, []string{ManagedByValue})
	cms, err := r.listConfigMaps(ctx, client.MatchingLabelsSelector{Selector: sel.Add(*notOurs)})
	if err != nil {
		return fetchedSource{}, fmt.Errorf("listing ConfigMaps for source %s: %w", src.Name, err)
	}
	sort.Slice(cms, func(i, j int) bool { return cms[i].Name < cms[j].Name })
	return fetchedSource{cms: cms}, nil
}

// addConfigMapSource adds what a ConfigMap or selector source fetched to
// set: the keys the source lists (a named ConfigMap's) or every key.
func addConfigMapSource(set *Set, src v1alpha1.Source, fetched fetchedSource) {
	if fetched.problem != "" {
		set.fail(src.Name, "", fetched.problem)
		return
	}
	for _, cm := range fetched.cms {
		var keys []string
		if src.ConfigMap != nil {
			keys = src.ConfigMap.Keys
		}
		if len(keys) == 0 {
			keys = configMapKeys(cm)
		}
		read := ConfigMapRead{Source: src.Name, Name: cm.Name}
		for _, key := range keys {
			if addConfigMapKey(set, src.Name, cm, key) {
				read.Keys = append(read.Keys, key)
			}
		}
		set.Read = append(set.Read, read)
	}
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
// reports why it cannot be one: missing, or not readable in its format
// (binary of no known format, not UTF-8, a damaged PDF...). A key is read
// in the format its content and name tell (PDF and DOCX in binaryData,
// HTML), else as Markdown; a key is always one document, so JSON Lines is
// read as Markdown too. It reports whether the document was kept.
func addConfigMapKey(set *Set, sourceName string, cm *corev1.ConfigMap, key string) bool {
	id := cm.Name + "/" + key
	data, ok := configMapValue(cm, key)
	if !ok {
		set.fail(sourceName, id, fmt.Sprintf("ConfigMap %s has no key %q", cm.Name, key))
		return false
	}
	format := document.Detect(key, data)
	if format == document.Unknown || format == document.JSONLines {
		format = document.Markdown
	}
	docs, err := document.Read(format, id, id, data)
	if err != nil {
		set.fail(sourceName, id, document.Reason(err))
		return false
	}
	return set.add(sourceName, docs[0])
}

// configMapValue is the value of key, from data or binaryData.
func configMapValue(cm *corev1.ConfigMap, key string) ([]byte, bool) {
	if text, ok := cm.Data[key]; ok {
		return []byte(text), true
	}
	data, ok := cm.BinaryData[key]
	return data, ok
}
