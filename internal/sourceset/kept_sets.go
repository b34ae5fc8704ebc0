package sourceset

import (
	"crypto/sha256"
	"encoding/json"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/fieldhash"
)

// A Reader with a ConfigMapCache also keeps the sets it reads from
// inline, ConfigMap and selector sources, by the sources' spec and the
// UID and resourceVersion of every ConfigMap they fetched. A read whose
// ConfigMaps are all unchanged then costs their metadata alone: no
// document is checked, added or hashed again. Sets of URL and sourceRef
// sources are read each time (their content is cached by the Fetchers).

// maxKeptSets and maxKeptDocuments bound the sets a ConfigMapCache keeps
// and their documents in all (each costs about 350 bytes beside its text,
// which the kept ConfigMaps hold); past either, every kept set is
// forgotten. A set of more documents is not kept.
const (
	maxKeptSets      = 64
	maxKeptDocuments = 1 << 18
)

// setKey identifies what a set is read from.
type setKey [sha256.Size]byte

// keepable reports whether every source is inline, a ConfigMap or a
// selector, so that the set read from them is known by their ConfigMaps'
// versions.
func keepable(sources []v1alpha1.Source) bool {
	for _, src := range sources {
		if readsRemote(src) {
			return false
		}
	}
	return true
}

// keyOf hashes the namespace, the sources' spec and, for each source in
// order, the problem it had and the name, UID and resourceVersion of every
// ConfigMap fetched for it, each field after its length.
func keyOf(namespace string, sources []v1alpha1.Source, fetched []fetchedSource) (setKey, error) {
	spec, err := json.Marshal(sources)
	if err != nil {
		return setKey{}, err
	}
	h := fieldhash.New()
	h.AddString(namespace)
	h.AddBytes(spec)
	for _, f := range fetched {
		h.AddString(f.problem)
		h.AddUint(uint64(len(f.cms)))
		for _, cm := range f.cms {
			h.AddString(cm.Name)
			h.AddString(string(cm.UID))
			h.AddString(cm.ResourceVersion)
		}
	}
	return h.Sum(), nil
}

// keptSet returns the set kept under key.
func (c *ConfigMapCache) keptSet(key setKey) (*Set, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	set, ok := c.sets[key]
	return set, ok
}

// keepSet keeps set under key, forgetting every kept set first when one
// more would pass maxKeptSets or maxKeptDocuments.
func (c *ConfigMapCache) keepSet(key setKey, set *Set) {
	n := len(set.Docs)
	if n > maxKeptDocuments {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sets == nil || len(c.sets) >= maxKeptSets || c.setDocs+n > maxKeptDocuments {
		c.sets, c.setDocs = map[setKey]*Set{}, 0
	}
	c.sets[key], c.setDocs = set, c.setDocs+n
}
