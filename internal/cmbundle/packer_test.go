package cmbundle

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// TestPackerHandsOutWhatPackReturns: a Packer's Each hands out exactly the
// ConfigMaps Pack returns, in order, as many as Count says, leaving out
// the shards stored (Omitted of them); it stops at the first error of
// its callback; and it refuses a file unlike its manifest when it comes
// to that file's shard, after handing out the shards before it.
func TestPackerHandsOutWhatPackReturns(t *testing.T) {
	dir := saveSegments(t, runsOf(t, 3, 3))
	labels := map[string]string{LabelCorpus: "docs"}
	whole := packShared(t, dir, "docs-rev-a")
	stored := map[string]bool{whole[0].Name: true, whole[2].Name: true}
	for _, opts := range [][]PackOption{
		{SharingSegments("docs-shared")},
		{SharingSegments("docs-shared"), OmittingStored(func(n string) bool { return stored[n] })},
		nil,
	} {
		want, err := Pack(dir, "ns", "docs-rev-a", labels, opts...)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPacker(dir, "ns", "docs-rev-a", labels, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var got []corev1.ConfigMap
		if err := p.Each(func(cm *corev1.ConfigMap) error { got = append(got, *cm); return nil }); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || p.Count() != len(want) {
			t.Fatalf("Each handed out %v (Count %d), want Pack's %v", names(got), p.Count(), names(want))
		}
		if all, err := Names(&want[len(want)-1]); err != nil || p.Omitted() != len(all)-len(want) {
			t.Fatalf("Omitted %d, want %d of the manifest's %d ConfigMaps (%v)", p.Omitted(), len(all)-len(want), len(all), err)
		}
		if manifest := p.Manifest(); !reflect.DeepEqual(manifest, want[len(want)-1]) {
			t.Fatalf("Manifest is %s, want the last ConfigMap, %s", manifest.Name, want[len(want)-1].Name)
		}
	}

	p, err := NewPacker(dir, "ns", "docs-rev-a", labels, SharingSegments("docs-shared"))
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	handed := 0
	if err := p.Each(func(*corev1.ConfigMap) error { handed++; return stop }); !errors.Is(err, stop) || handed != 1 {
		t.Fatalf("Each went on after its callback failed: %v, %d handed out", err, handed)
	}

	seg := damageSegment(t, dir, 1)
	if p, err = NewPacker(dir, "ns", "docs-rev-a", labels, SharingSegments("docs-shared")); err != nil {
		t.Fatalf("NewPacker read the segment's bytes: %v", err)
	}
	handed = 0
	err = p.Each(func(*corev1.ConfigMap) error { handed++; return nil })
	if err == nil || !strings.Contains(err.Error(), seg) || handed == 0 || handed >= p.Count() {
		t.Fatalf("Each of a damaged second segment: %v after %d of %d, want a refusal naming %s after the first segment's shards", err, handed, p.Count(), seg)
	}
}

// TestRestoringHandsOutTheMissingShardsOfTheSameFiles: restoring a
// stored revision hands out only the shards named missing, shared or the
// revision's own, byte for byte as Pack made them, then the manifest; and
// it refuses, with ErrOtherFiles, a bundle of other documents under the
// same name.
func TestRestoringHandsOutTheMissingShardsOfTheSameFiles(t *testing.T) {
	segmentDocs, bundleDocs := runsOf(t, 3, 3), synthtest.New(7, 3000).Documents(500)
	for _, layout := range []struct {
		name string
		save func(docs []hierarchy.Document) string
		docs []hierarchy.Document
		opts []PackOption
	}{
		{"segments, shared shards", func(d []hierarchy.Document) string { return saveSegments(t, d) }, segmentDocs, []PackOption{SharingSegments("docs-shared")}},
		{"one bundle, its own shards", func(d []hierarchy.Document) string { return saveBundle(t, d, "rev-a") }, bundleDocs, nil},
	} {
		t.Run(layout.name, func(t *testing.T) {
			labels := map[string]string{LabelCorpus: "docs"}
			dir := layout.save(layout.docs)
			whole, err := Pack(dir, "ns", "docs-rev-a", labels, layout.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(whole) < 4 {
				t.Fatalf("%d ConfigMaps; the test needs three shards and the manifest", len(whole))
			}
			stored := &whole[len(whole)-1]
			missing := []string{whole[0].Name, whole[len(whole)-2].Name}
			restoring := append(slices.Clone(layout.opts), Restoring(stored, missing))
			p, err := NewPacker(dir, "ns", "docs-rev-a", labels, restoring...)
			if err != nil {
				t.Fatalf("the bundle the manifest was packed from: %v", err)
			}
			var got []corev1.ConfigMap
			if err := p.Each(func(cm *corev1.ConfigMap) error { got = append(got, *cm); return nil }); err != nil {
				t.Fatal(err)
			}
			want := []corev1.ConfigMap{whole[0], whole[len(whole)-2], *stored}
			if !reflect.DeepEqual(got, want) || p.Count() != 3 || p.Omitted() != len(whole)-3 {
				t.Fatalf("Each handed out %v (Count %d, Omitted %d), want %v", names(got), p.Count(), p.Omitted(), names(want))
			}
			other := layout.save(layout.docs[:len(layout.docs)-1])
			if _, err := NewPacker(other, "ns", "docs-rev-a", labels, restoring...); !errors.Is(err, ErrOtherFiles) {
				t.Fatalf("a bundle without the last document: %v, want ErrOtherFiles", err)
			}
		})
	}
}
