package cmbundle

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// checkConfigMaps checks the shape Pack promises: shards named name-0...
// then the manifest, every one immutable, labelled, and under 1 MiB as JSON.
func checkConfigMaps(t *testing.T, cms []corev1.ConfigMap, name, rev string) {
	t.Helper()
	if len(cms) < 2 {
		t.Fatalf("Pack returned %d configmaps, want shards and a manifest", len(cms))
	}
	for i, cm := range cms {
		last := i == len(cms)-1
		wantName, wantRole := shardName(name, i), RoleShard
		if last {
			wantName, wantRole = name, RoleManifest
		}
		if cm.Name != wantName || cm.Namespace != "ns" {
			t.Errorf("configmap %d is %s/%s, want ns/%s", i, cm.Namespace, cm.Name, wantName)
		}
		want := map[string]string{LabelCorpus: "docs", LabelRevision: rev, LabelRole: wantRole}
		if !reflect.DeepEqual(cm.Labels, want) {
			t.Errorf("%s labels %v, want %v", cm.Name, cm.Labels, want)
		}
		if cm.Immutable == nil || !*cm.Immutable {
			t.Errorf("%s is not immutable", cm.Name)
		}
		data, err := json.Marshal(cm)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) >= 1<<20 {
			t.Errorf("%s is %d bytes as JSON, over 1 MiB", cm.Name, len(data))
		}
		for key := range cm.BinaryData {
			if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
				t.Errorf("%s key %q: %v", cm.Name, key, errs)
			}
		}
		if last != (cm.Data != nil) || !last && len(cm.BinaryData) == 0 {
			t.Errorf("%s: data %d keys, binaryData %d keys", cm.Name, len(cm.Data), len(cm.BinaryData))
		}
	}
}

// checkSameAnswers checks that got answers every query as want does.
func checkSameAnswers(t *testing.T, got, want *bundle.Bundle, qs []string) {
	t.Helper()
	ctx := context.Background()
	for _, opts := range []retrieve.Options{{}, {MaxParents: 10, ChildTopK: 3}, {Budget: 80}} {
		for _, q := range qs {
			w, err := want.Retriever.Retrieve(ctx, q, opts)
			if err != nil {
				t.Fatal(err)
			}
			g, err := got.Retriever.Retrieve(ctx, q, opts)
			if err != nil {
				t.Fatalf("Retrieve(%q) from the unpacked bundle: %v", q, err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("Retrieve(%q, %+v):\nunpacked %+v\noriginal %+v", q, opts, g, w)
			}
		}
	}
}

func TestPackUnpackRoundTrip(t *testing.T) {
	dir := saveBundle(t, corpus(), "rev-a")
	cms := pack(t, dir, "docs-rev-a")
	checkConfigMaps(t, cms, "docs-rev-a", "rev-a")

	manifest := cms[len(cms)-1]
	wantJSON, _ := os.ReadFile(filepath.Join(dir, bundle.ManifestFile))
	if manifest.Data[ManifestKey] != string(wantJSON) {
		t.Errorf("manifest.json not carried verbatim:\n%s", manifest.Data[ManifestKey])
	}
	again, err := Pack(dir, "ns", "docs-rev-a", map[string]string{LabelCorpus: "docs"})
	if err != nil || !reflect.DeepEqual(again, cms) {
		t.Errorf("Pack is not deterministic (err %v)", err)
	}

	dest := filepath.Join(t.TempDir(), "data", "docs-rev-a")
	m, err := Unpack(context.Background(), reader(cms), "ns", "docs-rev-a", dest)
	if err != nil {
		t.Fatalf("Unpack: %v", err)
	}
	if m.Revision != "rev-a" || m.Documents != len(corpus()) {
		t.Errorf("Unpack returned manifest %+v", m)
	}
	if got, _ := os.ReadFile(filepath.Join(dest, bundle.ManifestFile)); !bytes.Equal(got, wantJSON) {
		t.Errorf("unpacked manifest.json differs")
	}
	if entries, _ := os.ReadDir(filepath.Dir(dest)); len(entries) != 1 {
		t.Errorf("beside the bundle: %v, want only the bundle", entries)
	}
	checkSameAnswers(t, openBundle(t, dest), openBundle(t, dir), queries)
}

func TestPackLargeFileSpansShards(t *testing.T) {
	synth := synthtest.New(7, 3000)
	dir := saveBundle(t, synth.Documents(500), "big")
	cms := pack(t, dir, "big")
	checkConfigMaps(t, cms, "big", "big")

	var table fileTable
	if err := json.Unmarshal([]byte(cms[len(cms)-1].Data[FilesKey]), &table); err != nil {
		t.Fatal(err)
	}
	spans := 0
	for _, f := range table.Files {
		shards := map[string]bool{}
		for _, c := range f.Chunks {
			shards[c.Shard] = true
		}
		spans = max(spans, len(shards))
	}
	if spans < 3 {
		t.Fatalf("largest file spans %d shards, want at least 3 (%d configmaps)", spans, len(cms))
	}
	if !reflect.DeepEqual(table.Shards, names(cms[:len(cms)-1])) {
		t.Errorf("file table lists shards %v", table.Shards)
	}

	dest := filepath.Join(t.TempDir(), "big")
	if _, err := Unpack(context.Background(), reader(cms), "ns", "big", dest); err != nil {
		t.Fatalf("Unpack: %v", err)
	}
	for _, f := range table.Files {
		want, _ := os.ReadFile(filepath.Join(dir, f.Path))
		got, _ := os.ReadFile(filepath.Join(dest, f.Path))
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs after the round trip", f.Path)
		}
	}
	qs := []string{synth.Query(2, 5), synth.Query(2, 5), synth.Query(3, 6)}
	checkSameAnswers(t, openBundle(t, dest), openBundle(t, dir), qs)
}

// names returns the names of cms.
func names(cms []corev1.ConfigMap) []string {
	var out []string
	for _, cm := range cms {
		out = append(out, cm.Name)
	}
	return out
}

func TestNames(t *testing.T) {
	cms := pack(t, saveBundle(t, corpus(), "rev-a"), "docs-rev-a")
	got, err := Names(&cms[len(cms)-1])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, names(cms)) {
		t.Errorf("Names = %v, want %v", got, names(cms))
	}
	if _, err := Names(&cms[0]); err == nil {
		t.Error("Names of a shard succeeded")
	}
}

func TestUnpackCorruptShard(t *testing.T) {
	cms := pack(t, saveBundle(t, corpus(), "rev-a"), "docs-rev-a")
	shard := cms[0].DeepCopy()
	for key, data := range shard.BinaryData {
		data = bytes.Clone(data)
		data[len(data)/2] ^= 0x20
		shard.BinaryData[key] = data
		break
	}
	cms[0] = *shard
	dest := filepath.Join(t.TempDir(), "b")
	_, err := Unpack(context.Background(), reader(cms), "ns", "docs-rev-a", dest)
	if err == nil || !strings.Contains(err.Error(), "sha256 mismatch") || !strings.Contains(err.Error(), "docs-rev-a-0") {
		t.Fatalf("Unpack of a corrupt shard: %v, want a sha256 mismatch naming docs-rev-a-0", err)
	}
	checkNothingLeft(t, dest)
}

func TestUnpackMissingShard(t *testing.T) {
	cms := pack(t, saveBundle(t, corpus(), "rev-a"), "docs-rev-a")
	dest := filepath.Join(t.TempDir(), "b")
	_, err := Unpack(context.Background(), reader(cms[1:]), "ns", "docs-rev-a", dest)
	if err == nil || !strings.Contains(err.Error(), "ns/docs-rev-a-0") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("Unpack without shard 0: %v, want an error naming ns/docs-rev-a-0", err)
	}
	checkNothingLeft(t, dest)

	_, err = Unpack(context.Background(), reader(cms[:len(cms)-1]), "ns", "docs-rev-a", dest)
	if err == nil || !strings.Contains(err.Error(), "ns/docs-rev-a") {
		t.Fatalf("Unpack without the manifest: %v", err)
	}
}

func TestUnpackRefusesOtherRevisionShard(t *testing.T) {
	cms := pack(t, saveBundle(t, corpus(), "rev-a"), "docs-rev-a")
	cms[0].Labels[LabelRevision] = "rev-b"
	_, err := Unpack(context.Background(), reader(cms), "ns", "docs-rev-a", filepath.Join(t.TempDir(), "b"))
	if err == nil || !strings.Contains(err.Error(), `revision "rev-b"`) {
		t.Fatalf("Unpack with a shard of another revision: %v", err)
	}
}

func TestUnpackRefusesPathTraversal(t *testing.T) {
	for _, bad := range []string{"../escape", "/abs", "children/../../x", "a//b", `a\b`, "", "manifest.json"} {
		cms := pack(t, saveBundle(t, corpus(), "rev-a"), "docs-rev-a")
		manifest := &cms[len(cms)-1]
		var table fileTable
		json.Unmarshal([]byte(manifest.Data[FilesKey]), &table)
		table.Files[0].Path = bad
		data, _ := json.Marshal(table)
		manifest.Data[FilesKey] = string(data)
		root := t.TempDir()
		_, err := Unpack(context.Background(), reader(cms), "ns", "docs-rev-a", filepath.Join(root, "sub", "b"))
		if err == nil || !strings.Contains(err.Error(), "file path") {
			t.Errorf("path %q: Unpack = %v, want a refused path", bad, err)
		}
		if _, err := os.Stat(filepath.Join(root, "escape")); err == nil {
			t.Errorf("path %q: a file was written outside the bundle", bad)
		}
	}
}

func TestUnpackReplacesBundleOnly(t *testing.T) {
	cmsA := pack(t, saveBundle(t, corpus(), "rev-a"), "docs-rev-a")
	cmsB := pack(t, saveBundle(t, corpus()[:2], "rev-b"), "docs-rev-b")
	r := reader(append(cmsA, cmsB...))
	ctx := context.Background()

	dest := t.TempDir() // exists and is empty
	if _, err := Unpack(ctx, r, "ns", "docs-rev-a", dest); err != nil {
		t.Fatalf("Unpack into an empty dir: %v", err)
	}
	m, err := Unpack(ctx, r, "ns", "docs-rev-b", dest)
	if err != nil || m.Revision != "rev-b" || m.Documents != 2 {
		t.Fatalf("Unpack over a bundle: %+v, %v", m, err)
	}
	openBundle(t, dest)

	other := filepath.Join(t.TempDir(), "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "precious.txt"), []byte("keep"), 0o644)
	if _, err := Unpack(ctx, r, "ns", "docs-rev-a", other); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("Unpack over a folder of other files: %v", err)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 1 {
		t.Errorf("the refused folder now holds %v", entries)
	}
	if entries, _ := os.ReadDir(filepath.Dir(other)); len(entries) != 1 {
		t.Errorf("left beside the refused folder: %v", entries)
	}
}

func TestPackRefuses(t *testing.T) {
	dir := saveBundle(t, corpus(), "rev-a")
	if _, err := Pack(dir, "ns", "Bad_Name", nil); err == nil {
		t.Error("Pack accepted an invalid configmap name")
	}
	if _, err := Pack(dir, "ns", "ok", map[string]string{LabelCorpus: "not a value"}); err == nil {
		t.Error("Pack accepted an invalid label value")
	}
	if _, err := Pack(t.TempDir(), "ns", "ok", nil); err == nil || !strings.Contains(err.Error(), "not a complete parentrag index") {
		t.Errorf("Pack of an empty dir: %v", err)
	}
	if err := os.Symlink("parents.jsonl", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Pack(dir, "ns", "ok", nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Pack of a bundle holding a symlink: %v", err)
	}
}

func TestChunkKeys(t *testing.T) {
	long := strings.Repeat("deep/", 60) + "file"
	for _, p := range []string{"parents.jsonl", "children/vectors.prgv", "a_b/c d/ü.bin", long} {
		for _, i := range []int{0, 12} {
			key := chunkKey(i, escapePath(p), p)
			if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
				t.Errorf("chunkKey(%d, %q) = %q: %v", i, p, key, errs)
			}
		}
	}
	// Escaping is injective: '_' itself is escaped.
	if a, b := escapePath("a_2Fb"), escapePath("a/b"); a == b {
		t.Errorf("escapePath collides: %q", a)
	}
	if a, b := chunkKey(0, escapePath(long), long), chunkKey(0, escapePath(long+"x"), long+"x"); a == b {
		t.Errorf("hashed keys collide: %q", a)
	}
}

// checkNothingLeft fails the test when dest or a temporary sibling exists.
func checkNothingLeft(t *testing.T, dest string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(dest))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("a failed Unpack left %v", entries)
	}
}
