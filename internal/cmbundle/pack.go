package cmbundle

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// Pack turns the complete bundle in dir into ConfigMaps for namespace: shard
// ConfigMaps holding every file's bytes in binaryData (each shard under
// MaxShardBytes, large files spanning shards), then the manifest ConfigMap
// named name, holding manifest.json verbatim and the file table (FilesKey).
// The revision's own shards are named <name>-0, <name>-1, ...; with
// SharingSegments, the shards of each segment of a bundle of segments are
// named by their content instead and shared by every revision holding that
// segment (see SharingSegments). The manifest ConfigMap is last: created in
// the order returned, it exists only once every shard does. Every
// ConfigMap is immutable and carries labels plus LabelRole; the revision's
// own carry LabelRevision too (from the bundle, unless labels set it),
// shared shards never do. The same dir always gives identical ConfigMaps.
// manifest.json itself is not sharded: Unpack writes it from the manifest
// ConfigMap, last.
func Pack(dir, namespace, name string, labels map[string]string, opts ...PackOption) ([]corev1.ConfigMap, error) {
	var o packOptions
	for _, opt := range opts {
		opt(&o)
	}
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	manifestJSON, err := os.ReadFile(filepath.Join(dir, bundle.ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	labels = withRevision(labels, m.Revision)
	if err := checkLabels(labels); err != nil {
		return nil, err
	}
	files, err := listFiles(dir)
	if err != nil {
		return nil, err
	}
	p := &packer{}
	for _, g := range groupFiles(files, m, o.sharedPrefix != "") {
		if err := p.addGroup(dir, g); err != nil {
			return nil, err
		}
	}
	names := p.names(name, o.sharedPrefix)
	if err := checkNames(append(names, name)); err != nil {
		return nil, err
	}
	return p.configMaps(namespace, name, names, labels, string(manifestJSON))
}

// PackOption changes how Pack names and shares shards.
type PackOption func(*packOptions)

type packOptions struct {
	sharedPrefix string
}

// SharingSegments makes Pack put each segment of a bundle of segments (its
// segment file and its parent pack) in shards of its own, named
// "<prefix>-<first 20 hex digits of the SHA-256 of the shard's keys and
// bytes>" and labelled without a revision. A segment unchanged since an
// earlier revision packed under the same prefix therefore gives the very
// ConfigMaps that revision stored: creating them again finds them there,
// and an edit stores only the shards of the segments it changed. Such a
// shard belongs to no revision; it is garbage once no manifest names it
// (see SharedShardSelector and Names). Other bundles pack as without it.
func SharingSegments(prefix string) PackOption {
	return func(o *packOptions) { o.sharedPrefix = prefix }
}

// withRevision returns a copy of labels with LabelRevision set to rev when
// labels do not set it.
func withRevision(labels map[string]string, rev string) map[string]string {
	out := make(map[string]string, len(labels)+2)
	for k, v := range labels {
		out[k] = v
	}
	if _, ok := out[LabelRevision]; !ok && rev != "" {
		out[LabelRevision] = rev
	}
	return out
}

// checkLabels refuses labels the API server would refuse, before anything
// is created.
func checkLabels(labels map[string]string) error {
	for k, v := range labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("label %s value %q: %s", k, v, strings.Join(errs, "; "))
		}
	}
	return nil
}

// checkNames refuses ConfigMap names that are not valid object names.
func checkNames(names []string) error {
	for _, n := range names {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return fmt.Errorf("configmap name %q: %s", n, strings.Join(errs, "; "))
		}
	}
	return nil
}

// shardName is the name of shard i of the revision whose manifest
// ConfigMap is name.
func shardName(name string, i int) string { return name + "-" + strconv.Itoa(i) }

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

// groupFiles puts files in the order Pack packs them: when sharing and the
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

// packer fills shards in order; it never goes back to an earlier shard, so
// the layout depends only on the files and their order.
type packer struct {
	shards []shard
	used   int  // encoded bytes of the last shard
	closed bool // the last shard takes no more chunks: a group ended
	files  []packedFile
}

// shard is the binaryData of one shard ConfigMap, and whether it is shared
// between revisions (named by content) or the revision's own.
type shard struct {
	data   map[string][]byte
	shared bool
}

// packedFile is a file of the bundle and the shard of each of its chunks,
// by index, named once every shard is full.
type packedFile struct {
	entry  fileEntry
	shards []int
}

// addGroup adds the files of g, in order, to shards that hold no chunk of
// another group.
func (p *packer) addGroup(dir string, g fileGroup) error {
	p.closed = true
	for _, rel := range g.files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("reading bundle: %w", err)
		}
		p.addFile(rel, data, g.shared)
	}
	return nil
}

// addFile appends data to the shards as chunks of the file rel and records
// the file. An empty file has no chunks.
func (p *packer) addFile(rel string, data []byte, shared bool) {
	sum := sha256.Sum256(data)
	f := packedFile{entry: fileEntry{Path: rel, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Chunks: []chunkRef{}}}
	esc := escapePath(rel)
	for i := 0; len(data) > 0; i++ {
		key := chunkKey(i, esc, rel)
		n := p.room(key)
		if p.closed || n <= 0 || (n < len(data) && n < minChunk) {
			p.newShard(shared)
			n = p.room(key)
		}
		n = min(n, len(data))
		p.shards[len(p.shards)-1].data[key] = data[:n]
		p.used += len(key) + base64.StdEncoding.EncodedLen(n) + entryOverhead
		f.entry.Chunks = append(f.entry.Chunks, chunkRef{Key: key})
		f.shards = append(f.shards, len(p.shards)-1)
		data = data[n:]
	}
	p.files = append(p.files, f)
}

// room returns how many raw bytes fit under key in the last shard (0 or
// less when none, or when there is no shard yet).
func (p *packer) room(key string) int {
	if len(p.shards) == 0 {
		return 0
	}
	encoded := MaxShardBytes - p.used - len(key) - entryOverhead
	return encoded / 4 * 3
}

// newShard starts an empty shard.
func (p *packer) newShard(shared bool) {
	p.shards = append(p.shards, shard{data: map[string][]byte{}, shared: shared})
	p.used = 0
	p.closed = false
}

// names returns the name of every shard: <name>-<i> for the revision's own
// (i counting those alone), <sharedPrefix>-<content hash> for shared ones.
func (p *packer) names(name, sharedPrefix string) []string {
	out := make([]string, len(p.shards))
	own := 0
	for i, s := range p.shards {
		if s.shared {
			out[i] = sharedPrefix + "-" + contentName(s.data)
			continue
		}
		out[i] = shardName(name, own)
		own++
	}
	return out
}

// contentName is the first 20 hex digits of a SHA-256 of data's keys and
// values, in key order: equal binaryData, equal name.
func contentName(data map[string][]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, key := range slices.Sorted(maps.Keys(data)) {
		binary.BigEndian.PutUint64(n[:], uint64(len(key)))
		h.Write(n[:])
		h.Write([]byte(key))
		binary.BigEndian.PutUint64(n[:], uint64(len(data[key])))
		h.Write(n[:])
		h.Write(data[key])
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// configMaps returns the shard ConfigMaps in order, then the manifest
// ConfigMap.
func (p *packer) configMaps(namespace, name string, names []string, labels map[string]string, manifestJSON string) ([]corev1.ConfigMap, error) {
	table := fileTable{Shards: names, Files: make([]fileEntry, len(p.files))}
	for i, f := range p.files {
		table.Files[i] = f.entry
		for j, s := range f.shards {
			table.Files[i].Chunks[j].Shard = names[s]
		}
	}
	shared := withoutRevision(labels)
	var out []corev1.ConfigMap
	for i, s := range p.shards {
		l := labels
		if s.shared {
			l = shared
		}
		cm := newConfigMap(namespace, names[i], l, RoleShard)
		cm.BinaryData = s.data
		out = append(out, cm)
	}
	files, err := json.Marshal(table)
	if err != nil {
		return nil, fmt.Errorf("encoding file table: %w", err)
	}
	cm := newConfigMap(namespace, name, labels, RoleManifest)
	cm.Data = map[string]string{ManifestKey: manifestJSON, FilesKey: string(files)}
	return append(out, cm), nil
}

// withoutRevision returns a copy of labels without LabelRevision.
func withoutRevision(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if k != LabelRevision {
			out[k] = v
		}
	}
	return out
}

// newConfigMap returns an empty immutable ConfigMap with labels and role.
func newConfigMap(namespace, name string, labels map[string]string, role string) corev1.ConfigMap {
	l := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		l[k] = v
	}
	l[LabelRole] = role
	immutable := true
	return corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: l},
		Immutable:  &immutable,
	}
}

// chunkKey is the binaryData key of chunk i of the file rel, whose escaped
// path is esc: "<i>.<esc>", or "<i>._h<sha256 of rel>" when that would be
// longer than a key may be. Keys of different files or chunks never
// collide: escaping is injective and never yields "_h".
func chunkKey(i int, esc, rel string) string {
	key := strconv.Itoa(i) + "." + esc
	if len(key) <= maxKeyLen {
		return key
	}
	sum := sha256.Sum256([]byte(rel))
	return strconv.Itoa(i) + "._h" + hex.EncodeToString(sum[:])
}

// escapePath maps a path onto the ConfigMap key alphabet [-._a-zA-Z0-9]:
// letters, digits, '-' and '.' stay; every other byte, '_' included,
// becomes '_' and two upper-case hex digits.
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '-' || c == '.' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_%02X", c)
	}
	return b.String()
}
