package cmbundle

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// listFiles returns the path, relative to dir and with slashes, of every
// regular file under dir but the manifest, in lexical order. Anything else
// than files and directories (a symbolic link, say) is refused.
func listFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("reading bundle: %w", err)
		}
		rel, err := filepath.Rel(dir, full)
		if err != nil {
			return fmt.Errorf("reading bundle: %w", err)
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
		case !d.Type().IsRegular():
			return fmt.Errorf("bundle file %s is not a regular file", rel)
		case rel != bundle.ManifestFile:
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// fileGroup is files packed together, in shards of their own when shared.
type fileGroup struct {
	files  []string
	shared bool
}

// groupFiles puts files in the order a Packer packs them: when sharing and the
// bundle's children are segments, first the files of no segment, then
// each segment's files (its segment file, then its parent pack's) as a
// shared group, in the manifest's order; otherwise every file, in one
// group of the revision's own.
func groupFiles(files []string, m bundle.Manifest, sharing bool) []fileGroup {
	if !sharing || m.VectorStore.Kind != bundle.VectorStoreSegments {
		return []fileGroup{{files: files}}
	}
	var groups []fileGroup
	taken := map[string]bool{}
	for _, seg := range m.VectorStore.Segments {
		key := strings.TrimSuffix(seg, bundle.SegmentExt)
		g := fileGroup{shared: true}
		for _, f := range files {
			if !taken[f] && (f == bundle.SegmentFile(key) || strings.HasPrefix(f, bundle.ParentPack(key)+"/")) {
				g.files = append(g.files, f)
				taken[f] = true
			}
		}
		groups = append(groups, g)
	}
	rest := fileGroup{}
	for _, f := range files {
		if !taken[f] {
			rest.files = append(rest.files, f)
		}
	}
	return append([]fileGroup{rest}, groups...)
}

// layout places the files of a bundle in shards, from their sizes and
// SHA-256s alone; configMaps then reads the bytes of the shards it
// returns. It never goes back to an earlier shard, so the layout depends
// only on the files and their order.
type layout struct {
	dir    string
	sums   map[string]bundle.FileSum // the manifest's, by path
	shards []shard
	used   int  // encoded bytes of the last shard
	closed bool // the last shard takes no more chunks: a group ended
	files  []packedFile
}

// shard is one shard ConfigMap's chunks, in order, and whether it is
// shared between revisions (named by what it holds) or the revision's own.
type shard struct {
	chunks []chunk
	shared bool
}

// chunk is the bytes [off, off+n) of the file-th file, under key.
type chunk struct {
	key       string
	file      int
	off, size int
}

// packedFile is a file of the bundle and the shard of each of its chunks,
// by index, named once every shard is placed.
type packedFile struct {
	entry  fileEntry
	shards []int
}

// manifestSums indexes the files the manifest lists by path.
func manifestSums(m bundle.Manifest) map[string]bundle.FileSum {
	sums := make(map[string]bundle.FileSum, len(m.Files))
	for _, f := range m.Files {
		sums[f.Path] = f
	}
	return sums
}

// addGroup adds the files of g, in order, to shards that hold no chunk of
// another group.
func (l *layout) addGroup(g fileGroup) error {
	l.closed = true
	for _, rel := range g.files {
		size, sum, err := l.sumOf(rel)
		if err != nil {
			return err
		}
		l.addFile(rel, size, sum, g.shared)
	}
	return nil
}

// sumOf returns the size and hex SHA-256 of the file rel: the manifest's
// when it lists the file with its size on disk (configMaps checks the
// bytes it reads against it), read from the file otherwise.
func (l *layout) sumOf(rel string) (int64, string, error) {
	full := filepath.Join(l.dir, filepath.FromSlash(rel))
	info, err := os.Stat(full)
	if err != nil {
		return 0, "", fmt.Errorf("reading bundle: %w", err)
	}
	if f, ok := l.sums[rel]; ok && f.Size == info.Size() {
		return f.Size, f.SHA256, nil
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return 0, "", fmt.Errorf("reading bundle: %w", err)
	}
	sum := sha256.Sum256(data)
	return int64(len(data)), hex.EncodeToString(sum[:]), nil
}

// addFile places the size bytes of the file rel, of SHA-256 sum, in
// chunks and records the file. An empty file has no chunks.
func (l *layout) addFile(rel string, size int64, sum string, shared bool) {
	f := packedFile{entry: fileEntry{Path: rel, Size: size, SHA256: sum, Chunks: []chunkRef{}}}
	esc := escapePath(rel)
	for i, off := 0, 0; int64(off) < size; i++ {
		left := int(size) - off
		key := chunkKey(i, esc, rel)
		n := l.room(key)
		if l.closed || n <= 0 || (n < left && n < minChunk) {
			l.newShard(shared)
			n = l.room(key)
		}
		n = min(n, left)
		last := &l.shards[len(l.shards)-1]
		last.chunks = append(last.chunks, chunk{key: key, file: len(l.files), off: off, size: n})
		l.used += len(key) + base64.StdEncoding.EncodedLen(n) + entryOverhead
		f.entry.Chunks = append(f.entry.Chunks, chunkRef{Key: key})
		f.shards = append(f.shards, len(l.shards)-1)
		off += n
	}
	l.files = append(l.files, f)
}

// room returns how many raw bytes fit under key in the last shard (0 or
// less when none, or when there is no shard yet).
func (l *layout) room(key string) int {
	if len(l.shards) == 0 {
		return 0
	}
	encoded := MaxShardBytes - l.used - len(key) - entryOverhead
	return encoded / 4 * 3
}

// newShard starts an empty shard.
func (l *layout) newShard(shared bool) {
	l.shards = append(l.shards, shard{shared: shared})
	l.used = 0
	l.closed = false
}

// names returns the name of every shard: <name>-<i> for the revision's own
// (i counting those alone), <sharedPrefix>-<content name> for shared ones.
func (l *layout) names(name, sharedPrefix string) []string {
	out := make([]string, len(l.shards))
	own := 0
	for i, s := range l.shards {
		if s.shared {
			out[i] = sharedPrefix + "-" + l.contentName(s)
			continue
		}
		out[i] = shardName(name, own)
		own++
	}
	return out
}

// contentName is the first 20 hex digits of a SHA-256 of what s holds:
// each chunk's key, and the SHA-256, offset and length of its file's
// bytes. Equal names, equal binaryData.
func (l *layout) contentName(s shard) string {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, c := range s.chunks {
		field([]byte(c.key))
		field([]byte(l.files[c.file].entry.SHA256))
		binary.BigEndian.PutUint64(n[:], uint64(c.off))
		h.Write(n[:])
		binary.BigEndian.PutUint64(n[:], uint64(c.size))
		h.Write(n[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// manifestConfigMap returns the manifest ConfigMap of the revision whose
// shards are named names: manifestJSON and the file table.
func (l *layout) manifestConfigMap(namespace, name string, names []string, labels map[string]string, manifestJSON string) (corev1.ConfigMap, error) {
	table := fileTable{Shards: names, Files: make([]fileEntry, len(l.files))}
	for i, f := range l.files {
		table.Files[i] = f.entry
		for j, s := range f.shards {
			table.Files[i].Chunks[j].Shard = names[s]
		}
	}
	files, err := json.Marshal(table)
	if err != nil {
		return corev1.ConfigMap{}, fmt.Errorf("encoding file table: %w", err)
	}
	cm := newConfigMap(namespace, name, labels, RoleManifest)
	cm.Data = map[string]string{ManifestKey: manifestJSON, FilesKey: string(files)}
	return cm, nil
}

// fileReader reads the bundle's files for the shards returned, each file
// once while its chunks follow one another, checking its bytes against the
// SHA-256 the layout recorded.
type fileReader struct {
	layout *layout
	file   int // the file held in data, -1 before any
	data   []byte
}

// binaryData returns the chunks of s by key.
func (r *fileReader) binaryData(s shard) (map[string][]byte, error) {
	out := make(map[string][]byte, len(s.chunks))
	for _, c := range s.chunks {
		data, err := r.read(c.file)
		if err != nil {
			return nil, err
		}
		out[c.key] = data[c.off : c.off+c.size]
	}
	return out, nil
}

// read returns the bytes of the i-th file, which must hash to its SHA-256.
func (r *fileReader) read(i int) ([]byte, error) {
	if r.data != nil && r.file == i {
		return r.data, nil
	}
	f := r.layout.files[i].entry
	data, err := os.ReadFile(filepath.Join(r.layout.dir, filepath.FromSlash(f.Path)))
	if err != nil {
		return nil, fmt.Errorf("reading bundle: %w", err)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, fmt.Errorf("bundle file %s does not hold what the bundle's manifest says (%d bytes, sha256 %s): refusing to pack it", f.Path, f.Size, f.SHA256)
	}
	r.file, r.data = i, data
	return data, nil
}
