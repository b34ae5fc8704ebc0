package controllers

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/kubemeta"
)

// storedRevision is what a revision's manifest ConfigMap says: the
// revision as a Corpus's status describes it (revisionFromManifest), and
// the ConfigMaps that hold it, its own, the shards it shares and itself
// (none for a revision on a claim).
type storedRevision struct {
	name   string // the manifest's
	status *v1alpha1.RevisionStatus
	names  []string
}

// revisionManifests reads revision manifests and remembers what each one
// said, by UID. A manifest is created whole and immutable, so what one
// UID holds never changes: a reconcile that meets a manifest read before
// sends no request for it where the manager's informer lists its
// metadata, and asks the API server only for its metadata where it does
// not. The zero value is ready to use.
type revisionManifests struct {
	mu   sync.Mutex
	read map[types.UID]storedRevision
}

// maxRememberedManifests bounds what revisionManifests keeps: past it, it
// forgets everything and reads each manifest again once.
const maxRememberedManifests = 256

// get returns what the manifest ConfigMap key holds. It reads the
// manifest's metadata from informer, the manager's cache of ConfigMap
// metadata, or, where informer is nil or lacks it, from api, the API
// server; the manifest itself is read from api only when its UID is new.
// A manifest that neither holds yields api's NotFound error. The result
// is the caller's own to change.
func (m *revisionManifests) get(ctx context.Context, informer, api client.Reader, key client.ObjectKey) (storedRevision, error) {
	meta := kubemeta.ConfigMap()
	if informer == nil || informer.Get(ctx, key, meta) != nil {
		if err := api.Get(ctx, key, meta); err != nil {
			return storedRevision{}, err
		}
	}
	if got, ok := m.remembered(meta.UID); ok {
		return got, nil
	}
	return m.fetch(ctx, api, key)
}

// list returns what every stored manifest of the Corpus c holds, as the
// API server lists them now: a manifest created a moment ago is among
// them. Only the manifests not read before are read whole.
func (m *revisionManifests) list(ctx context.Context, api client.Reader, c *v1alpha1.Corpus) ([]storedRevision, error) {
	metas := kubemeta.ConfigMapList()
	if err := api.List(ctx, metas, client.InNamespace(c.Namespace), manifestsOf(c)); err != nil {
		return nil, err
	}
	stored := make([]storedRevision, 0, len(metas.Items))
	for _, meta := range metas.Items {
		got, ok := m.remembered(meta.UID)
		if !ok {
			var err error
			if got, err = m.fetch(ctx, api, client.ObjectKeyFromObject(&meta)); apierrors.IsNotFound(err) {
				continue // deleted since it was listed
			} else if err != nil {
				return nil, err
			}
		}
		stored = append(stored, got)
	}
	return stored, nil
}

// namesKnown returns the ConfigMaps named by the manifests of the Corpus
// c that informer lists, and true, when every one of them was read
// before: it costs no request. It returns false when informer is nil, or
// lists a manifest not read yet; the caller then asks the API server.
func (m *revisionManifests) namesKnown(ctx context.Context, informer client.Reader, c *v1alpha1.Corpus) (map[string]bool, bool) {
	if informer == nil {
		return nil, false
	}
	metas := kubemeta.ConfigMapList()
	if err := informer.List(ctx, metas, client.InNamespace(c.Namespace), manifestsOf(c)); err != nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	known := make([]storedRevision, 0, len(metas.Items))
	for _, meta := range metas.Items {
		got, ok := m.read[meta.UID]
		if !ok {
			return nil, false
		}
		known = append(known, got)
	}
	return namesOf(known), true
}

// namesOf returns the set of the ConfigMaps that the revisions name.
func namesOf(revs []storedRevision) map[string]bool {
	named := map[string]bool{}
	for _, rev := range revs {
		for _, n := range rev.names {
			named[n] = true
		}
	}
	return named
}

// manifestsOf selects the manifest ConfigMaps of the Corpus c.
func manifestsOf(c *v1alpha1.Corpus) client.MatchingLabels {
	return client.MatchingLabels{cmbundle.LabelCorpus: c.Name, cmbundle.LabelRole: cmbundle.RoleManifest}
}

// fetch reads the manifest key whole from api and remembers what it says.
func (m *revisionManifests) fetch(ctx context.Context, api client.Reader, key client.ObjectKey) (storedRevision, error) {
	var cm corev1.ConfigMap
	if err := api.Get(ctx, key, &cm); err != nil {
		return storedRevision{}, err
	}
	status, names, err := revisionFromManifest(&cm)
	if err != nil {
		return storedRevision{}, err
	}
	got := storedRevision{name: cm.Name, status: status, names: names}
	m.remember(cm.UID, got)
	return got.copy(), nil
}

// remembered returns a copy of what the manifest uid said, if it was read.
func (m *revisionManifests) remembered(uid types.UID) (storedRevision, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	got, ok := m.read[uid]
	return got.copy(), ok
}

// remember keeps what the manifest uid says.
func (m *revisionManifests) remember(uid types.UID, got storedRevision) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.read == nil || len(m.read) >= maxRememberedManifests {
		m.read = map[types.UID]storedRevision{}
	}
	m.read[uid] = got
}

// copy returns s with a status and names of its own.
func (s storedRevision) copy() storedRevision {
	return storedRevision{name: s.name, status: s.status.DeepCopy(), names: slices.Clone(s.names)}
}
