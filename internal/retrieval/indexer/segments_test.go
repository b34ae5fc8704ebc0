package indexer_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// segmentsOf cuts docs into runs and builds each into its segment, and
// returns each segment's bytes by its key, and the keys in order.
func segmentsOf(t *testing.T, docs []hierarchy.Document) (map[string]string, []string) {
	t.Helper()
	compiled, err := policy.Compile(&policy.Default().Spec)
	if err != nil {
		t.Fatal(err)
	}
	segs := map[string]string{}
	var keys []string
	for _, g := range indexer.GroupSegments(docs, indexer.DefaultContextWeight, []byte("scope")) {
		seg, err := indexer.BuildSegment(context.Background(), g.Docs, compiled.Builder, indexer.SegmentOptions{ContextWeight: indexer.DefaultContextWeight})
		if err != nil {
			t.Fatal(err)
		}
		segs[g.Key] = string(seg.Data)
		keys = append(keys, g.Key)
	}
	return segs, keys
}

// TestAnEditRewritesOnlyItsSegment checks that the documents an edit
// leaves alone keep their segments' keys, and that a key kept names the
// same bytes whatever the edit did to the corpus statistics: an edit, an
// addition or a deletion rewrites the one segment holding the document,
// a rename at most two (the run its old id ended, and the one its new id
// may end).
func TestAnEditRewritesOnlyItsSegment(t *testing.T) {
	indexer.SetSegmentDocs(t, 8)
	base := synthtest.New(21, 3000).Documents(160)
	before, _ := segmentsOf(t, base)
	if len(before) < 8 {
		t.Fatalf("%d segments of 160 documents; the test needs several", len(before))
	}
	for _, tt := range []struct {
		name      string
		edit      func([]hierarchy.Document) []hierarchy.Document
		rewritten int
	}{
		{"edit", func(d []hierarchy.Document) []hierarchy.Document {
			d[70].Text += "\n\nOne more sentence about zebras and their stripes."
			return d
		}, 1},
		{"add", func(d []hierarchy.Document) []hierarchy.Document {
			return slices.Insert(d, 90, synthtest.New(22, 3000).Document("doc-new", 3))
		}, 1},
		{"delete", func(d []hierarchy.Document) []hierarchy.Document { return slices.Delete(d, 40, 41) }, 1},
		{"rename", func(d []hierarchy.Document) []hierarchy.Document { d[120].ID = "doc-renamed"; return d }, 2},
	} {
		after, keys := segmentsOf(t, tt.edit(slices.Clone(base)))
		kept := 0
		for _, k := range keys {
			if data, ok := before[k]; ok {
				if data != after[k] {
					t.Fatalf("%s: segment %s has other bytes under the same key", tt.name, k)
				}
				kept++
			}
		}
		if rewritten := len(keys) - kept; rewritten < 1 || rewritten > tt.rewritten {
			t.Errorf("%s: %d of %d segments rewritten, want 1 to %d", tt.name, rewritten, len(keys), tt.rewritten)
		}
		t.Logf("%s: %d of %d segments kept", tt.name, kept, len(keys))
	}
}

// TestBuildSegmentIsTheSameWhateverTheWorkers checks that a segment's
// bytes do not depend on how many workers made its units, and that a
// cancelled build stops with the context's error.
func TestBuildSegmentIsTheSameWhateverTheWorkers(t *testing.T) {
	compiled, err := policy.Compile(&policy.Default().Spec)
	if err != nil {
		t.Fatal(err)
	}
	docs := synthtest.New(23, 3000).Documents(60)
	var first string
	for _, workers := range []int{1, 3, 16} {
		seg, err := indexer.BuildSegment(context.Background(), docs, compiled.Builder, indexer.SegmentOptions{Workers: workers, ContextWeight: indexer.DefaultContextWeight})
		if err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = string(seg.Data)
		} else if string(seg.Data) != first {
			t.Fatalf("%d workers wrote other bytes than one", workers)
		}
	}
	// Bytes made in the memory of another segment's (here, bytes of
	// 0xff) are the same, and are in that memory.
	buffer := bytes.Repeat([]byte{0xff}, 2*len(first))
	seg, err := indexer.BuildSegment(context.Background(), docs, compiled.Builder, indexer.SegmentOptions{ContextWeight: indexer.DefaultContextWeight, Buffer: buffer})
	if err != nil || string(seg.Data) != first || &seg.Data[0] != &buffer[0] {
		t.Fatalf("a build into a used buffer: error %v, same bytes %v, in the buffer %v", err, string(seg.Data) == first, len(seg.Data) > 0 && &seg.Data[0] == &buffer[0])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := indexer.BuildSegment(ctx, docs, compiled.Builder, indexer.SegmentOptions{Workers: 2}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled build: error %v, want context.Canceled", err)
	}
}
