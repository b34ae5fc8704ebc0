package bundle

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"strings"

	"github.com/parentrag/parentrag/internal/filesum"
	"github.com/parentrag/parentrag/internal/index/segment"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
)

// Where a bundle whose children are segments keeps each segment's files:
// the segment of key K is children/segments/K.seg, and its parents the
// parent store (a pack) in parents/K.
const (
	SegmentsDir    = "segments"
	SegmentExt     = ".seg"
	ParentPacksDir = "parents"
)

// SegmentFile is the path, relative to the bundle, of the segment of key.
func SegmentFile(key string) string {
	return path.Join(ChildrenDir, SegmentsDir, key+SegmentExt)
}

// ParentPack is the path, relative to the bundle, of the parent pack of
// the segment of key.
func ParentPack(key string) string {
	return path.Join(ParentPacksDir, key)
}

// SegmentEntry is one segment of a bundle: its key, what it holds, and
// the size and SHA-256 of its files (its segment and its parent pack's),
// by path relative to the bundle.
type SegmentEntry struct {
	Key       string                 `json:"key"`
	Documents int                    `json:"documents"`
	Parents   int                    `json:"parents"`
	Children  int                    `json:"children"`
	Files     map[string]filesum.Sum `json:"files"`
}

// CommitSegments finishes a bundle whose children are the segments of
// entries, in order, each file already in place (SegmentFile and
// ParentPack): the manifest m gets their keys, their summed counts and
// every file's checksum (the entries' own, none read back), then the
// bundle moves into place as Commit moves it. On failure the temporary
// directory is removed and dir is left as it was.
func (p *Pending) CommitSegments(entries []SegmentEntry, m Manifest) (Manifest, error) {
	m, err := p.writeSegmentsManifest(entries, m)
	if err == nil {
		err = swapInto(p.tmp, p.dir)
	}
	if err != nil {
		p.Abort()
	}
	return m, err
}

// writeSegmentsManifest writes the manifest of a bundle of segments.
func (p *Pending) writeSegmentsManifest(entries []SegmentEntry, m Manifest) (Manifest, error) {
	m.FormatVersion = FormatVersion
	m.VectorStore = VectorStoreRef{Kind: VectorStoreSegments}
	m.Documents, m.Parents, m.Children = 0, 0, 0
	known := map[string]filesum.Sum{}
	for _, e := range entries {
		m.VectorStore.Segments = append(m.VectorStore.Segments, e.Key+SegmentExt)
		m.Documents += e.Documents
		m.Parents += e.Parents
		m.Children += e.Children
		maps.Copy(known, e.Files)
	}
	size, err := dirSize(p.tmp)
	if err != nil {
		return m, err
	}
	m.Bytes = size
	if m.Files, err = sumFiles(p.tmp, known); err != nil {
		return m, fmt.Errorf("summing bundle files: %w", err)
	}
	if err := writeManifest(p.tmp, m); err != nil {
		return m, fmt.Errorf("writing manifest: %w", err)
	}
	return m, nil
}

// segmentPaths returns, for each segment ref lists, the path in dir that
// at names for its key (SegmentFile or ParentPack), refusing a name that
// is not a key's file name.
func segmentPaths(dir string, ref VectorStoreRef, at func(key string) string) ([]string, error) {
	paths := make([]string, len(ref.Segments))
	for i, name := range ref.Segments {
		key, ok := strings.CutSuffix(name, SegmentExt)
		if !ok || key == "" || !filepath.IsLocal(key) || filepath.Base(key) != key {
			return nil, fmt.Errorf("segment name %q is not a segment's file name", name)
		}
		paths[i] = filepath.Join(dir, filepath.FromSlash(at(key)))
	}
	return paths, nil
}

// openSegments maps the segments the manifest lists and opens them as one
// set, weighed as the manifest's lexical embedder weighs.
func openSegments(dir string, m Manifest) (*segment.Store, error) {
	if m.Embedder.Kind != EmbedderLexical {
		return nil, fmt.Errorf("segments hold lexical children, but the embedder is %q", m.Embedder.Kind)
	}
	paths, err := segmentPaths(dir, m.VectorStore, SegmentFile)
	if err != nil {
		return nil, err
	}
	return segment.OpenFiles(paths, m.Embedder.K1, m.Embedder.B, float32(m.Embedder.ContextWeight))
}

// openParents opens the bundle's parent store: the packs of its segments,
// read as one, or the one store at its root.
func openParents(dir string, m Manifest) (*parentstore.Files, error) {
	if m.VectorStore.Kind != VectorStoreSegments {
		return parentstore.OpenFiles(dir)
	}
	dirs, err := segmentPaths(dir, m.VectorStore, ParentPack)
	if err != nil {
		return nil, err
	}
	return parentstore.OpenPacks(dirs)
}
