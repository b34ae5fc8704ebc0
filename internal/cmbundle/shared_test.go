package cmbundle

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/parentrag/parentrag/internal/policy/policytest"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// runsOf returns documents that a build into segments cuts into runs of
// per documents each: the last of each run has an id that ends a run.
func runsOf(t *testing.T, runs, per int) []hierarchy.Document {
	t.Helper()
	synth := synthtest.New(11, 2000)
	docs := synth.Documents(runs * per)
	for r := 0; r < runs; r++ {
		for i := 0; i < per; i++ {
			docs[r*per+i].ID = fmt.Sprintf("run%d-doc%d", r, i)
		}
		docs[r*per+per-1].ID = bundletest.RunEndingID(fmt.Sprintf("run%d-end", r))
	}
	if groups := indexer.GroupSegments(docs, 0, nil); len(groups) != runs {
		t.Fatalf("the documents make %d runs, want %d", len(groups), runs)
	}
	return docs
}

// saveSegments builds docs into a bundle of segments with the default
// policy and the lexical embedder, returning its directory.
func saveSegments(t testing.TB, docs []hierarchy.Document) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	req := policytest.LexicalRequest(t, docs, bundle.VectorStoreRef{Kind: bundle.VectorStoreSegments}, dir)
	if _, err := build.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	return dir
}

// packShared packs dir as corpus "docs" under name, sharing segments
// under the prefix "docs-shared".
func packShared(t testing.TB, dir, name string) []corev1.ConfigMap {
	t.Helper()
	cms, err := Pack(dir, "ns", name, map[string]string{LabelCorpus: "docs"}, SharingSegments("docs-shared"))
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	return cms
}

// sharedShards returns the shared shards of cms by name, checking that
// each is named and labelled as one and that the others are the
// revision's own.
func sharedShards(t *testing.T, cms []corev1.ConfigMap, name string) map[string]corev1.ConfigMap {
	t.Helper()
	shared := map[string]corev1.ConfigMap{}
	selector := SharedShardSelector("docs")
	for _, cm := range cms[:len(cms)-1] {
		isShared := strings.HasPrefix(cm.Name, "docs-shared-")
		if selector.Matches(labels.Set(cm.Labels)) != isShared {
			t.Errorf("%s labelled %v: the selector of shared shards matches it: %v", cm.Name, cm.Labels, !isShared)
		}
		if isShared {
			shared[cm.Name] = cm
		} else if !strings.HasPrefix(cm.Name, name+"-") || cm.Labels[LabelRevision] == "" {
			t.Errorf("%s labelled %v is neither a shared shard nor one of %s's own", cm.Name, cm.Labels, name)
		}
	}
	return shared
}

// TestPackSharesUnchangedSegments packs a bundle of segments, then the
// bundle of an edit of one run's document: the shards of every other
// segment are the very ConfigMaps of the first revision, so storing the
// second creates only the changed segment's, and the second revision
// unpacks, from its own ConfigMaps and those it shares, into the files
// of its bundle.
func TestPackSharesUnchangedSegments(t *testing.T) {
	docs := runsOf(t, 3, 4)
	dirA := saveSegments(t, docs)
	cmsA := packShared(t, dirA, "docs-rev-a")
	again, err := Pack(dirA, "ns", "docs-rev-a", map[string]string{LabelCorpus: "docs"}, SharingSegments("docs-shared"))
	if err != nil || !reflect.DeepEqual(again, cmsA) {
		t.Fatalf("Pack with shared segments is not deterministic (err %v)", err)
	}
	sharedA := sharedShards(t, cmsA, "docs-rev-a")
	if len(sharedA) < 3 {
		t.Fatalf("%d shared shards for 3 segments", len(sharedA))
	}

	docs[5].Text += "\n\nAn edited paragraph of the second run."
	dirB := saveSegments(t, docs)
	cmsB := packShared(t, dirB, "docs-rev-b")
	sharedB := sharedShards(t, cmsB, "docs-rev-b")
	var created []corev1.ConfigMap
	kept := 0
	for _, cm := range cmsB {
		if old, ok := sharedA[cm.Name]; ok {
			if !reflect.DeepEqual(old, cm) {
				t.Fatalf("shared shard %s differs between the revisions", cm.Name)
			}
			kept++
			continue
		}
		created = append(created, cm)
	}
	if kept < 2 || kept == len(sharedB) {
		t.Fatalf("the edit's revision shares %d of its %d shared shards with the first, want the two unchanged segments' and not the edited one's", kept, len(sharedB))
	}
	t.Logf("revision a: %d ConfigMaps; the edit's: %d, of which %d shared with a", len(cmsA), len(cmsB), kept)

	omitted, err := Pack(dirB, "ns", "docs-rev-b", map[string]string{LabelCorpus: "docs"}, SharingSegments("docs-shared"),
		OmittingStored(func(name string) bool { _, ok := sharedA[name]; return ok }))
	if err != nil || !reflect.DeepEqual(omitted, created) {
		t.Fatalf("Pack omitting the first revision's shards returned %v (error %v), want the %d created: %v", names(omitted), err, len(created), names(created))
	}

	stored := append(append([]corev1.ConfigMap(nil), cmsA...), created...)
	dest := filepath.Join(t.TempDir(), "b")
	if _, err := Unpack(context.Background(), reader(stored), "ns", "docs-rev-b", dest); err != nil {
		t.Fatalf("Unpack of the edit's revision: %v", err)
	}
	sameFiles(t, dest, dirB)
	checkSameAnswers(t, openBundle(t, dest), openBundle(t, dirB), []string{docs[5].Text[:40], docs[0].Text[:40]})
}

// TestPackRefusesFilesUnlikeTheManifest: a segment file whose bytes are
// not those its manifest records (same size) is refused when Pack reads
// it, and never read when its shards are omitted as stored.
func TestPackRefusesFilesUnlikeTheManifest(t *testing.T) {
	dir := saveSegments(t, runsOf(t, 2, 3))
	whole := packShared(t, dir, "docs-rev-a")
	seg := damageSegment(t, dir, 0)
	_, err := Pack(dir, "ns", "docs-rev-a", map[string]string{LabelCorpus: "docs"}, SharingSegments("docs-shared"))
	if err == nil || !strings.Contains(err.Error(), seg) || !strings.Contains(err.Error(), "does not hold what the bundle's manifest says") {
		t.Fatalf("Pack of a damaged segment file: %v, want a refusal naming %s", err, seg)
	}
	stored := map[string]bool{}
	for _, cm := range whole[:len(whole)-1] {
		stored[cm.Name] = true
	}
	cms, err := Pack(dir, "ns", "docs-rev-a", map[string]string{LabelCorpus: "docs"}, SharingSegments("docs-shared"), OmittingStored(func(n string) bool { return stored[n] }))
	if err != nil || len(cms) != 1 || !reflect.DeepEqual(cms[0], whole[len(whole)-1]) {
		t.Fatalf("Pack omitting every stored shard: %v (error %v), want the manifest alone, unchanged", names(cms), err)
	}
}

// damageSegment flips a byte in the middle of the i-th segment file of
// the bundle in dir, keeping its size, and returns the file's path in the
// bundle.
func damageSegment(t *testing.T, dir string, i int) string {
	t.Helper()
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	seg := bundle.SegmentFile(strings.TrimSuffix(m.VectorStore.Segments[i], bundle.SegmentExt))
	path := filepath.Join(dir, filepath.FromSlash(seg))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return seg
}

// TestPackWithoutSharingKeepsSegmentsOwn: without SharingSegments, a
// bundle of segments packs into the revision's own shards alone.
func TestPackWithoutSharingKeepsSegmentsOwn(t *testing.T) {
	dir := saveSegments(t, runsOf(t, 2, 3))
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkConfigMaps(t, pack(t, dir, "docs-rev-s"), "docs-rev-s", m.Revision)
}

// sameFiles fails unless the bundles in dirs got and want hold the same
// files with the same bytes.
func sameFiles(t *testing.T, got, want string) {
	t.Helper()
	wantFiles, err := listFiles(want)
	if err != nil {
		t.Fatal(err)
	}
	gotFiles, err := listFiles(got)
	if err != nil || !reflect.DeepEqual(gotFiles, wantFiles) {
		t.Fatalf("files %v (%v), want %v", gotFiles, err, wantFiles)
	}
	for _, f := range append(wantFiles, bundle.ManifestFile) {
		g, _ := os.ReadFile(filepath.Join(got, f))
		w, _ := os.ReadFile(filepath.Join(want, f))
		if !bytes.Equal(g, w) {
			t.Errorf("%s differs", f)
		}
	}
}
