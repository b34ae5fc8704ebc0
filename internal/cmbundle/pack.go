package cmbundle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// Packer turns the complete bundle in a directory into ConfigMaps for a
// namespace, handed out one at a time (Each): shard ConfigMaps holding
// every file's bytes in binaryData (each shard under MaxShardBytes, large
// files spanning shards), then the manifest ConfigMap, holding
// manifest.json verbatim and the file table (FilesKey). The revision's
// own shards are named <name>-0, <name>-1, ... after the manifest
// ConfigMap's name; with SharingSegments, the shards of each segment of a
// bundle of segments are named by what they hold instead and shared by
// every revision holding that segment, and with OmittingStored those
// already stored are left out. The manifest ConfigMap is last: created in
// the order handed out, it exists only once every shard does. Every
// ConfigMap is immutable and carries the labels given plus LabelRole; the
// revision's own carry LabelRevision too (from the bundle, unless the
// labels set it), shared shards never do. The same directory always gives
// identical ConfigMaps. Every file read is checked against the SHA-256 its
// manifest records: a bundle whose files are not what its manifest says
// is refused, so a ConfigMap never holds other bytes than its name and the
// file table promise. manifest.json itself is not sharded: Unpack writes
// it from the manifest ConfigMap, last. A Packer reads the bytes of one
// shard after the other: storing a revision with it holds one shard, and
// the bundle file it comes from, in memory, not the revision.
type Packer struct {
	layout    *layout
	namespace string
	names     []string // of every shard
	labels    map[string]string
	manifest  corev1.ConfigMap
	stored    func(name string) bool
	only      map[string]bool // when not nil, the only shards Each hands out
	count     int             // the ConfigMaps Each hands out
}

// NewPacker lays out the bundle in dir, from its manifest and the sizes of
// its files, for a manifest ConfigMap named name in namespace, and refuses
// invalid names and labels and an incomplete bundle; a file whose bytes
// are unlike its manifest Each finds.
func NewPacker(dir, namespace, name string, labels map[string]string, opts ...PackOption) (*Packer, error) {
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
	l := &layout{dir: dir, sums: manifestSums(m)}
	for _, g := range groupFiles(files, m, o.sharedPrefix != "") {
		if err := l.addGroup(g); err != nil {
			return nil, err
		}
	}
	names := l.names(name, o.sharedPrefix)
	if err := checkNames(append(names, name)); err != nil {
		return nil, err
	}
	manifest, err := l.manifestConfigMap(namespace, name, names, labels, string(manifestJSON))
	if err != nil {
		return nil, err
	}
	if err := o.checkSameFiles(&manifest); err != nil {
		return nil, err
	}
	p := &Packer{layout: l, namespace: namespace, names: names, labels: labels, manifest: manifest, stored: o.stored, only: o.only}
	for i := range l.shards {
		if !p.omits(i) {
			p.count++
		}
	}
	p.count++ // the manifest
	return p, nil
}

// Count is how many ConfigMaps Each hands out: the manifest, and every
// shard but those left out as stored (or, restoring, not missing).
func (p *Packer) Count() int { return p.count }

// Omitted is how many of the shards the manifest names Each leaves out,
// as stored already (OmittingStored, Restoring).
func (p *Packer) Omitted() int { return len(p.names) + 1 - p.count }

// Manifest is the manifest ConfigMap, the last Each hands out.
func (p *Packer) Manifest() corev1.ConfigMap { return p.manifest }

// omits reports whether Each leaves the i-th shard out.
func (p *Packer) omits(i int) bool {
	if p.only != nil {
		return !p.only[p.names[i]]
	}
	return p.layout.shards[i].shared && p.stored != nil && p.stored(p.names[i])
}

// Each hands every ConfigMap to f, in order, the manifest last, and stops
// at f's first error, which it returns. A shard's bytes are read, and
// checked against the manifest, just before f gets it.
func (p *Packer) Each(f func(cm *corev1.ConfigMap) error) error {
	shared := withoutRevision(p.labels)
	r := fileReader{layout: p.layout}
	for i, s := range p.layout.shards {
		if p.omits(i) {
			continue
		}
		lbl := p.labels
		if s.shared {
			lbl = shared
		}
		cm := newConfigMap(p.namespace, p.names[i], lbl, RoleShard)
		data, err := r.binaryData(s)
		if err != nil {
			return err
		}
		cm.BinaryData = data
		if err := f(&cm); err != nil {
			return err
		}
	}
	manifest := p.Manifest()
	return f(&manifest)
}

// PackOption changes how a Packer names and shares shards.
type PackOption func(*packOptions)

type packOptions struct {
	sharedPrefix string
	stored       func(name string) bool
	restoring    *corev1.ConfigMap
	only         map[string]bool // the shards Each hands out, when restoring
}

// SharingSegments makes a Packer put each segment of a bundle of segments (its
// segment file and its parent pack) in shards of its own, named
// "<prefix>-<first 20 hex digits of a SHA-256 of what the shard holds>"
// (each chunk's key, and the SHA-256, offset and length of the bytes of the
// file it holds) and labelled without a revision. A segment unchanged since an
// earlier revision packed under the same prefix therefore gives the very
// ConfigMaps that revision stored: creating them again finds them there,
// and an edit stores only the shards of the segments it changed. Such a
// shard belongs to no revision; it is garbage once no manifest names it
// (see SharedShardSelector and Names). Other bundles pack as without it.
func SharingSegments(prefix string) PackOption {
	return func(o *packOptions) { o.sharedPrefix = prefix }
}

// OmittingStored makes a Packer leave out every shared shard (see
// SharingSegments) whose name stored reports as stored already: its bytes
// are neither read nor returned. The manifest ConfigMap still names it. An
// edit's revision then reads and returns only the shards of the segments
// it changed, whatever the corpus's size.
func OmittingStored(stored func(name string) bool) PackOption {
	return func(o *packOptions) { o.stored = stored }
}

// ErrOtherFiles says that a bundle packed with Restoring holds other
// files than the stored manifest names.
var ErrOtherFiles = errors.New("the bundle holds other files than the stored manifest names")

// Restoring makes a Packer store again the shards named in missing of a
// revision whose manifest ConfigMap stored still holds: NewPacker refuses,
// with ErrOtherFiles, a bundle whose file table (every file's path, size,
// SHA-256 and shards) is not the stored one, so that other bytes never go
// under the names the revision holds; Each hands out only those shards,
// shared or the revision's own, then the manifest. The others are neither
// read nor returned.
func Restoring(stored *corev1.ConfigMap, missing []string) PackOption {
	return func(o *packOptions) {
		o.restoring = stored
		o.only = make(map[string]bool, len(missing))
		for _, n := range missing {
			o.only[n] = true
		}
	}
}

// checkSameFiles returns ErrOtherFiles unless manifest holds the file
// table of the manifest o restores; nil when o restores none.
func (o packOptions) checkSameFiles(manifest *corev1.ConfigMap) error {
	if o.restoring == nil || o.restoring.Data[FilesKey] == manifest.Data[FilesKey] {
		return nil
	}
	return fmt.Errorf("%w %s", ErrOtherFiles, o.restoring.Name)
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
