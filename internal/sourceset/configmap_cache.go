package sourceset

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/internal/kubemeta"
)

// ConfigMapCache keeps the source ConfigMaps Readers read, with the UID
// and resourceVersion each had, so that a Reader that finds a ConfigMap
// unchanged by its metadata alone does not read its data again: a
// reconcile of a Corpus whose sources did not change asks the API server
// for their names and versions, not for their text. It keeps at most
// MaxConfigMapCacheBytes of data and forgets everything past that. It is
// safe for concurrent use; the zero value is ready.
type ConfigMapCache struct {
	mu    sync.Mutex
	objs  map[types.NamespacedName]*corev1.ConfigMap
	bytes int
	// sets are the sets read from kept ConfigMaps (see Reader.Read); they
	// are forgotten whenever a ConfigMap is kept anew, so that they hold
	// no data the cache has let go.
	sets    map[setKey]*Set
	setDocs int // the documents of sets
}

// MaxConfigMapCacheBytes bounds the data a ConfigMapCache keeps.
const MaxConfigMapCacheBytes = 128 << 20

// cached returns the ConfigMap kept for meta if it still has meta's UID
// and resourceVersion. The ConfigMap is shared: it must not be changed.
func (c *ConfigMapCache) cached(meta *metav1.PartialObjectMetadata) (*corev1.ConfigMap, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cm, ok := c.objs[types.NamespacedName{Namespace: meta.Namespace, Name: meta.Name}]
	if !ok || cm.UID != meta.UID || cm.ResourceVersion != meta.ResourceVersion {
		return nil, false
	}
	return cm, true
}

// remember keeps cm, in place of what was kept under its name.
func (c *ConfigMapCache) remember(cm *corev1.ConfigMap) {
	size := dataBytes(cm)
	c.mu.Lock()
	defer c.mu.Unlock()
	key := types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}
	c.sets, c.setDocs = nil, 0
	if old, ok := c.objs[key]; ok {
		c.bytes -= dataBytes(old)
		delete(c.objs, key)
	}
	if size > MaxConfigMapCacheBytes {
		return
	}
	if c.objs == nil || c.bytes+size > MaxConfigMapCacheBytes {
		c.objs, c.bytes = map[types.NamespacedName]*corev1.ConfigMap{}, 0
	}
	c.objs[key], c.bytes = cm, c.bytes+size
}

// dataBytes is the size of a ConfigMap's data and binary data.
func dataBytes(cm *corev1.ConfigMap) int {
	n := 0
	for k, v := range cm.Data {
		n += len(k) + len(v)
	}
	for k, v := range cm.BinaryData {
		n += len(k) + len(v)
	}
	return n
}

// getConfigMap reads the ConfigMap name of the Reader's namespace: from
// the cache when its metadata shows it unchanged, else whole from Client
// (which says when it is not found).
func (r *Reader) getConfigMap(ctx context.Context, name string) (*corev1.ConfigMap, error) {
	key := client.ObjectKey{Namespace: r.Namespace, Name: name}
	if r.ConfigMaps != nil {
		meta := kubemeta.ConfigMap()
		if err := r.metadata().Get(ctx, key, meta); err == nil {
			if cm, ok := r.ConfigMaps.cached(meta); ok {
				return cm, nil
			}
		}
	}
	cm := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, key, cm); err != nil {
		return nil, err
	}
	if r.ConfigMaps != nil {
		r.ConfigMaps.remember(cm)
	}
	return cm, nil
}

// listConfigMaps lists the ConfigMaps of the Reader's namespace that opts
// select: from the cache when their metadata shows every one unchanged,
// else whole.
func (r *Reader) listConfigMaps(ctx context.Context, opts ...client.ListOption) ([]*corev1.ConfigMap, error) {
	opts = append(opts, client.InNamespace(r.Namespace))
	if r.ConfigMaps != nil {
		if cms, ok, err := r.listCached(ctx, opts); ok || err != nil {
			return cms, err
		}
	}
	var list corev1.ConfigMapList
	if err := r.Client.List(ctx, &list, opts...); err != nil {
		return nil, err
	}
	cms := make([]*corev1.ConfigMap, len(list.Items))
	for i := range list.Items {
		cms[i] = &list.Items[i]
		if r.ConfigMaps != nil {
			r.ConfigMaps.remember(cms[i])
		}
	}
	return cms, nil
}

// listCached lists the metadata of the ConfigMaps opts select and returns
// them from the cache, or false when the cache lacks one of them as it is.
func (r *Reader) listCached(ctx context.Context, opts []client.ListOption) ([]*corev1.ConfigMap, bool, error) {
	metas := kubemeta.ConfigMapList()
	if err := r.metadata().List(ctx, metas, opts...); err != nil {
		return nil, false, err
	}
	cms := make([]*corev1.ConfigMap, len(metas.Items))
	for i := range metas.Items {
		cm, ok := r.ConfigMaps.cached(&metas.Items[i])
		if !ok {
			return nil, false, nil
		}
		cms[i] = cm
	}
	return cms, true, nil
}

// metadata returns where the Reader reads ConfigMap metadata.
func (r *Reader) metadata() client.Reader {
	if r.Metadata != nil {
		return r.Metadata
	}
	return r.Client
}
