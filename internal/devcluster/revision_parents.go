package devcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
)

// RevisionParents tells which parents a revision holds, read from the
// revision's ConfigMaps the way a query pod reads them, so that a test can
// check that every parent a query server returns belongs to the revision
// it says it serves. It holds the parent ids of every revision of one
// Corpus asked for so far, and is safe for concurrent use.
type RevisionParents struct {
	reader client.Reader
	corpus *v1alpha1.Corpus
	dir    string

	mu  sync.Mutex
	ids map[string]map[string]bool
}

// NewRevisionParents returns a RevisionParents that unpacks revisions of c
// into dir.
func NewRevisionParents(reader client.Reader, c *v1alpha1.Corpus, dir string) *RevisionParents {
	return &RevisionParents{reader: reader, corpus: c.DeepCopy(), dir: dir, ids: map[string]map[string]bool{}}
}

// Of returns the parent ids of a revision: its bundle is unpacked from the
// revision ConfigMaps (checksums verified) the first time it is asked for,
// and its parent store read.
func (s *RevisionParents) Of(ctx context.Context, revision string) (map[string]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ids, ok := s.ids[revision]; ok {
		return ids, nil
	}
	dest := filepath.Join(s.dir, revision)
	m, err := cmbundle.Unpack(ctx, s.reader, s.corpus.Namespace, s.corpus.RevisionObjectName(revision), dest)
	if err != nil {
		return nil, fmt.Errorf("reading revision %s to check its parents: %w", revision, err)
	}
	if m.Revision != revision {
		return nil, fmt.Errorf("configmap %s holds revision %s, not %s", s.corpus.RevisionObjectName(revision), m.Revision, revision)
	}
	store, err := parentstore.OpenFiles(dest)
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", revision, err)
	}
	defer store.Close()
	ids := map[string]bool{}
	for _, id := range store.IDs() {
		ids[id] = true
	}
	s.ids[revision] = ids
	return ids, nil
}
