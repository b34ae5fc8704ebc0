package cmbundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// Unpack reads the revision whose manifest ConfigMap is namespace/name and
// writes its bundle into destDir, then returns the bundle's manifest. Files
// are assembled in a temporary directory beside destDir, each checked
// against its recorded size and sha256, manifest.json written last, and the
// whole moved into place only when complete: destDir never holds a partial
// bundle. A missing or corrupt shard is an error naming its ConfigMap. An
// existing destDir is replaced only when it is empty or holds a bundle.
func Unpack(ctx context.Context, r client.Reader, namespace, name, destDir string) (bundle.Manifest, error) {
	var m bundle.Manifest
	var cm corev1.ConfigMap
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &cm); err != nil {
		return m, fmt.Errorf("getting bundle manifest configmap %s/%s: %w", namespace, name, err)
	}
	table, err := parseTable(&cm)
	if err != nil {
		return m, err
	}
	manifestJSON, ok := cm.Data[ManifestKey]
	if !ok {
		return m, fmt.Errorf("configmap %s/%s is not a bundle manifest: no %s", namespace, name, ManifestKey)
	}
	dest := filepath.Clean(destDir)
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return m, fmt.Errorf("creating %s: %w", filepath.Dir(dest), err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dest), filepath.Base(dest)+".tmp-*")
	if err != nil {
		return m, fmt.Errorf("creating bundle directory: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once tmp has been moved into place
	u := &unpacker{ctx: ctx, r: r, manifest: &cm, dir: tmp}
	if err := u.writeAll(table, manifestJSON); err != nil {
		return m, err
	}
	if err := replaceDir(tmp, dest); err != nil {
		return m, err
	}
	return bundle.ReadManifest(dest)
}

// unpacker writes the files of one revision, holding at most one shard in
// memory at a time.
type unpacker struct {
	ctx      context.Context
	r        client.Reader
	manifest *corev1.ConfigMap
	dir      string
	shard    *corev1.ConfigMap
}

// writeAll writes every file of table, then manifest.json, and checks that
// the result reads as a bundle.
func (u *unpacker) writeAll(table fileTable, manifestJSON string) error {
	for _, f := range table.Files {
		if err := u.writeFile(f); err != nil {
			return err
		}
	}
	path := filepath.Join(u.dir, bundle.ManifestFile)
	if err := os.WriteFile(path, []byte(manifestJSON), 0o644); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	if _, err := bundle.ReadManifest(u.dir); err != nil {
		return fmt.Errorf("configmap %s/%s: %w", u.manifest.Namespace, u.manifest.Name, err)
	}
	return nil
}

// writeFile assembles one file from its chunks and checks its size and
// sha256.
func (u *unpacker) writeFile(f fileEntry) (err error) {
	full := filepath.Join(u.dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	out, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	h := sha256.New()
	var size int64
	for _, c := range f.Chunks {
		data, err := u.chunk(c)
		if err != nil {
			return fmt.Errorf("file %s: %w", f.Path, err)
		}
		h.Write(data)
		size += int64(len(data))
		if _, err := out.Write(data); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
	}
	if size != f.Size {
		return fmt.Errorf("file %s from configmaps %s: %d bytes, manifest says %d", f.Path, shardsOf(f), size, f.Size)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
		return fmt.Errorf("file %s from configmaps %s: sha256 mismatch (got %s, manifest says %s)", f.Path, shardsOf(f), sum, f.SHA256)
	}
	return nil
}

// chunk returns the bytes of one chunk, fetching its shard unless it is the
// one held.
func (u *unpacker) chunk(c chunkRef) ([]byte, error) {
	if u.shard == nil || u.shard.Name != c.Shard {
		shard, err := u.getShard(c.Shard)
		if err != nil {
			return nil, err
		}
		u.shard = shard
	}
	data, ok := u.shard.BinaryData[c.Key]
	if !ok {
		return nil, fmt.Errorf("configmap %s/%s has no key %s", u.shard.Namespace, u.shard.Name, c.Key)
	}
	return data, nil
}

// getShard fetches a shard ConfigMap and refuses one labelled with another
// revision. A shared shard has no revision: what it holds is checked, like
// every shard's, against the file table's sizes and SHA-256s.
func (u *unpacker) getShard(name string) (*corev1.ConfigMap, error) {
	ns := u.manifest.Namespace
	var shard corev1.ConfigMap
	if err := u.r.Get(u.ctx, client.ObjectKey{Namespace: ns, Name: name}, &shard); err != nil {
		return nil, fmt.Errorf("getting bundle shard configmap %s/%s: %w", ns, name, err)
	}
	want, ok := u.manifest.Labels[LabelRevision]
	if got, labelled := shard.Labels[LabelRevision]; ok && labelled && got != want {
		return nil, fmt.Errorf("configmap %s/%s belongs to revision %q, not %q", ns, name, got, want)
	}
	return &shard, nil
}

// shardsOf lists the shards a file's chunks come from, for error messages.
func shardsOf(f fileEntry) string {
	var names []string
	for _, c := range f.Chunks {
		if len(names) == 0 || names[len(names)-1] != c.Shard {
			names = append(names, c.Shard)
		}
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// replaceDir moves the complete directory tmp to dest. An existing dest is
// moved aside first and removed after, and only when it is empty or holds
// a bundle, so that a mistaken destination never wipes other files.
func replaceDir(tmp, dest string) error {
	info, err := os.Lstat(dest)
	if errors.Is(err, fs.ErrNotExist) {
		return moveInto(tmp, dest)
	}
	if err != nil {
		return fmt.Errorf("checking %s: %w", dest, err)
	}
	if err := checkReplaceable(dest, info); err != nil {
		return err
	}
	old := tmp + ".old"
	if err := os.Rename(dest, old); err != nil {
		return fmt.Errorf("moving old bundle aside: %w", err)
	}
	if err := moveInto(tmp, dest); err != nil {
		os.Rename(old, dest)
		return err
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("removing the replaced bundle: %w", err)
	}
	return nil
}

// moveInto renames tmp to dest.
func moveInto(tmp, dest string) error {
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("moving bundle into place: %w", err)
	}
	return nil
}

// checkReplaceable accepts an existing dest only when it is a directory that
// is empty or holds a bundle manifest.
func checkReplaceable(dest string, info fs.FileInfo) error {
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory: refusing to replace it with a bundle", dest)
	}
	if _, err := os.Stat(filepath.Join(dest, bundle.ManifestFile)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dest)
	if err != nil {
		return fmt.Errorf("checking %s: %w", dest, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is neither empty nor a parentrag bundle: refusing to replace it", dest)
	}
	return nil
}
