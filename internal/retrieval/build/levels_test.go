package build_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// TestBundlesOfFiveLevels builds documents into every level, into the
// embedded store and into segments, with and without a warm unit cache,
// and checks that each bundle opens with every unit of every level in its
// parent store, that the builds agree byte for byte where they should,
// and that adaptive queries answer alike from both child indexes, with
// units of the larger levels read from the parent store.
func TestBundlesOfFiveLevels(t *testing.T) {
	docs := synthtest.New(7, 6000).Documents(30)
	compiled, err := policy.Compile(&v1alpha1.ChunkingPolicySpec{
		Levels: []v1alpha1.Level{v1alpha1.LevelDocument, v1alpha1.LevelSection, v1alpha1.LevelParent, v1alpha1.LevelChild, v1alpha1.LevelSentence},
		Parent: &v1alpha1.ChunkSize{ChunkSize: 600}, Child: &v1alpha1.ChunkSize{ChunkSize: 200, ChunkOverlap: 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	spec := *compiled
	stored := 0
	for _, d := range docs {
		res := spec.Builder.Build(d)
		stored += len(res.Parents) + len(res.Ancestors)
	}
	embedded, _ := cachedBuild(t, docs, spec, "")
	cache := t.TempDir()
	cachedBuild(t, docs, spec, cache)
	warm, reused := cachedBuild(t, docs, spec, cache)
	if reused != len(docs) {
		t.Errorf("a warm build reused %d of %d documents", reused, len(docs))
	}
	sameBundles(t, embedded, warm)
	segmentDir, _ := buildInto(t, docs, spec, "", segments)
	a, b := openBundle(t, embedded), openBundle(t, segmentDir)
	if a.Manifest.Parents != stored || b.Manifest.Parents != stored {
		t.Fatalf("bundles hold %d and %d units, the splits %d", a.Manifest.Parents, b.Manifest.Parents, stored)
	}
	if a.Retriever.Leaf != hierarchy.LevelSentence {
		t.Errorf("the bundle's children are %q, want sentences", a.Retriever.Leaf)
	}
	levels := map[hierarchy.Level]int{}
	s := synthtest.New(7, 6000)
	for range 40 {
		q := s.Sentence()
		opts := retrieve.Options{Mode: retrieve.ModeAdaptive, MaxParents: 5, Adaptive: retrieve.AdaptiveOptions{MergeShare: 0.2}}
		ra, err := a.Retriever.Retrieve(context.Background(), q, opts)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Retriever.Retrieve(context.Background(), q, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ra, rb) {
			t.Fatalf("%q: embedded %+v, segments %+v", q, ra, rb)
		}
		for _, r := range ra {
			levels[r.Level]++
		}
	}
	if levels[hierarchy.LevelDocument]+levels[hierarchy.LevelSection]+levels[hierarchy.LevelParent]+levels[hierarchy.LevelChild] == 0 {
		t.Errorf("no query climbed above its sentences: %v", levels)
	}
	t.Logf("levels returned: %v", levels)
}
