// Package cmbundle stores a revision bundle in immutable ConfigMaps, the
// embedded parent and child store of parentrag: the bundle's files are split
// across shard ConfigMaps, and one manifest ConfigMap, created last, lists
// where every byte lives and what every file hashes to.
package cmbundle

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Labels on every ConfigMap of a revision.
const (
	// LabelCorpus names the Corpus the revision belongs to (set by the
	// caller of NewPacker).
	LabelCorpus = "parentrag.io/corpus"
	// LabelRevision is the bundle's revision. A Packer sets it from the bundle
	// manifest when the caller does not; shared shards have none.
	LabelRevision = "parentrag.io/revision"
	// LabelRole is RoleManifest or RoleShard.
	LabelRole = "parentrag.io/role"
)

// Values of LabelRole.
const (
	RoleManifest = "manifest"
	RoleShard    = "shard"
)

// Keys of the manifest ConfigMap's data.
const (
	// ManifestKey holds the bundle's manifest.json verbatim.
	ManifestKey = "manifest.json"
	// FilesKey holds the file table: every file's path, size, sha256 and
	// the ordered (shard, key) chunks its bytes are split into.
	FilesKey = "files.json"
)

// MaxShardBytes bounds the binaryData of one shard ConfigMap as it travels
// in JSON: key names plus the base64 encoding of the values (raw bytes are
// 3/4 of that). A shard marshalled to JSON, metadata included, therefore
// stays under the 1 MiB object limit with room to spare.
const MaxShardBytes = 900_000

// entryOverhead is what one binaryData entry adds in JSON besides its key
// and encoded value: two pairs of quotes, a colon and a comma.
const entryOverhead = 6

// minChunk is the smallest chunk worth starting in a partly filled shard:
// below it the file starts a fresh shard instead of leaving a sliver.
const minChunk = 64 << 10

// maxKeyLen is the longest ConfigMap key the API server accepts.
const maxKeyLen = 253

// fileTable is the content of FilesKey.
type fileTable struct {
	// Shards lists every shard ConfigMap in creation order.
	Shards []string    `json:"shards"`
	Files  []fileEntry `json:"files"`
}

// fileEntry is one file of the bundle.
type fileEntry struct {
	// Path is relative to the bundle directory, with slashes.
	Path   string     `json:"path"`
	Size   int64      `json:"size"`
	SHA256 string     `json:"sha256"`
	Chunks []chunkRef `json:"chunks"`
}

// chunkRef locates one piece of a file: a key of a shard's binaryData.
type chunkRef struct {
	Shard string `json:"shard"`
	Key   string `json:"key"`
}

// Names returns the name of every ConfigMap of the revision whose manifest
// ConfigMap is given, in creation order: the shards, then the manifest. It
// reads only the manifest ConfigMap, so it works while shards are missing
// (for garbage collection, say).
func Names(manifest *corev1.ConfigMap) ([]string, error) {
	table, err := parseTable(manifest)
	if err != nil {
		return nil, err
	}
	return append(append([]string(nil), table.Shards...), manifest.Name), nil
}

// SharedShardSelector selects the shared shards (see SharingSegments) of
// the Corpus named corpus: shards labelled with it and with no revision.
func SharedShardSelector(corpus string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelCorpus: corpus, LabelRole: RoleShard}).Add(noRevision)
}

// noRevision requires that an object carry no LabelRevision.
var noRevision = func() labels.Requirement {
	r, err := labels.NewRequirement(LabelRevision, selection.DoesNotExist, nil)
	if err != nil {
		panic(err) // a constant, valid key
	}
	return *r
}()

// parseTable reads and checks the file table of a manifest ConfigMap: every
// chunk names a listed shard, and every path is a clean relative path that
// cannot leave the bundle directory.
func parseTable(cm *corev1.ConfigMap) (fileTable, error) {
	var table fileTable
	raw, ok := cm.Data[FilesKey]
	if !ok {
		return table, fmt.Errorf("configmap %s/%s is not a bundle manifest: no %s", cm.Namespace, cm.Name, FilesKey)
	}
	if err := json.Unmarshal([]byte(raw), &table); err != nil {
		return table, fmt.Errorf("configmap %s/%s: corrupt %s: %w", cm.Namespace, cm.Name, FilesKey, err)
	}
	shards := make(map[string]bool, len(table.Shards))
	for _, s := range table.Shards {
		shards[s] = true
	}
	seen := map[string]bool{}
	for _, f := range table.Files {
		if err := checkPath(f.Path); err != nil {
			return table, fmt.Errorf("configmap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
		if seen[f.Path] {
			return table, fmt.Errorf("configmap %s/%s: file %q listed twice", cm.Namespace, cm.Name, f.Path)
		}
		seen[f.Path] = true
		for _, c := range f.Chunks {
			if !shards[c.Shard] {
				return table, fmt.Errorf("configmap %s/%s: file %q names unlisted shard %q", cm.Namespace, cm.Name, f.Path, c.Shard)
			}
		}
	}
	return table, nil
}

// checkPath accepts a clean, relative, slash-separated path that stays
// inside the bundle directory and is not the manifest itself.
func checkPath(p string) error {
	switch {
	case p == "" || strings.Contains(p, `\`) || path.Clean(p) != p:
		return fmt.Errorf("file path %q is not a clean relative path", p)
	case !filepath.IsLocal(filepath.FromSlash(p)):
		return fmt.Errorf("file path %q leaves the bundle directory", p)
	case p == ManifestKey:
		return fmt.Errorf("file path %q is carried in %s, not in shards", p, ManifestKey)
	}
	return nil
}
