package cmbundle

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// Pack turns the complete bundle in dir into ConfigMaps for namespace: shard
// ConfigMaps named <name>-0, <name>-1, ... holding every file's bytes in
// binaryData (each shard under MaxShardBytes, large files spanning shards),
// then the manifest ConfigMap named name, holding manifest.json verbatim and
// the file table (FilesKey). The manifest ConfigMap is last: created in the
// order returned, it exists only once every shard does. Every ConfigMap is
// immutable and carries labels plus LabelRole (and LabelRevision, from the
// bundle, unless labels set it). The same dir always gives identical
// ConfigMaps. manifest.json itself is not sharded: Unpack writes it from the
// manifest ConfigMap, last.
func Pack(dir, namespace, name string, labels map[string]string) ([]corev1.ConfigMap, error) {
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
	p := &packer{name: name}
	if err := p.addDir(dir); err != nil {
		return nil, err
	}
	if err := checkNames(name, len(p.shards)); err != nil {
		return nil, err
	}
	return p.configMaps(namespace, labels, string(manifestJSON))
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

// checkNames refuses a name whose manifest or shard ConfigMap names are not
// valid object names.
func checkNames(name string, shards int) error {
	for _, n := range []string{name, shardName(name, max(shards-1, 0))} {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return fmt.Errorf("configmap name %q: %s", n, strings.Join(errs, "; "))
		}
	}
	return nil
}

// shardName is the name of shard i of the revision whose manifest
// ConfigMap is name.
func shardName(name string, i int) string { return name + "-" + strconv.Itoa(i) }

// packer fills shards in order; it never goes back to an earlier shard, so
// the layout depends only on the files and their order.
type packer struct {
	name   string
	shards []map[string][]byte
	used   int // encoded bytes of the last shard
	files  []fileEntry
}

// addDir adds every regular file under dir but the manifest, in lexical
// path order. Anything else than files and directories (a symbolic link,
// say) is refused.
func (p *packer) addDir(dir string) error {
	return filepath.WalkDir(dir, func(full string, d fs.DirEntry, err error) error {
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
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("bundle file %s is not a regular file", rel)
		case rel == bundle.ManifestFile:
			return nil
		}
		data, err := os.ReadFile(full)
		if err != nil {
			return fmt.Errorf("reading bundle: %w", err)
		}
		p.addFile(rel, data)
		return nil
	})
}

// addFile appends data to the shards as chunks of the file rel and records
// the file. An empty file has no chunks.
func (p *packer) addFile(rel string, data []byte) {
	sum := sha256.Sum256(data)
	entry := fileEntry{Path: rel, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Chunks: []chunkRef{}}
	esc := escapePath(rel)
	for i := 0; len(data) > 0; i++ {
		key := chunkKey(i, esc, rel)
		n := p.room(key)
		if len(p.shards) == 0 || n <= 0 || (n < len(data) && n < minChunk) {
			p.newShard()
			n = p.room(key)
		}
		n = min(n, len(data))
		p.shards[len(p.shards)-1][key] = data[:n]
		p.used += len(key) + base64.StdEncoding.EncodedLen(n) + entryOverhead
		entry.Chunks = append(entry.Chunks, chunkRef{Shard: shardName(p.name, len(p.shards)-1), Key: key})
		data = data[n:]
	}
	p.files = append(p.files, entry)
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
func (p *packer) newShard() {
	p.shards = append(p.shards, map[string][]byte{})
	p.used = 0
}

// configMaps returns the shard ConfigMaps in order, then the manifest
// ConfigMap.
func (p *packer) configMaps(namespace string, labels map[string]string, manifestJSON string) ([]corev1.ConfigMap, error) {
	table := fileTable{Shards: []string{}, Files: p.files}
	var out []corev1.ConfigMap
	for i, data := range p.shards {
		cm := newConfigMap(namespace, shardName(p.name, i), labels, RoleShard)
		cm.BinaryData = data
		out = append(out, cm)
		table.Shards = append(table.Shards, cm.Name)
	}
	files, err := json.Marshal(table)
	if err != nil {
		return nil, fmt.Errorf("encoding file table: %w", err)
	}
	cm := newConfigMap(namespace, p.name, labels, RoleManifest)
	cm.Data = map[string]string{ManifestKey: manifestJSON, FilesKey: string(files)}
	return append(out, cm), nil
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
