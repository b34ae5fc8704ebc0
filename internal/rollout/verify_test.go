package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// openBundle saves docs as a bundle and opens it, as a rollout does.
func openBundle(t *testing.T, docs []hierarchy.Document) *bundle.Bundle {
	t.Helper()
	b, err := bundle.OpenContext(context.Background(), bundletest.Save(t, docs, "rev-1"))
	if err != nil {
		t.Fatalf("OpenContext: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestVerifyPassesOnABuiltBundle(t *testing.T) {
	b := openBundle(t, corpus())
	m := b.Manifest
	if m.Parents < 4 {
		t.Fatalf("corpus made %d parents; the test needs more samples than a few", m.Parents)
	}
	for _, samples := range []int{0, 3, 1000} {
		t.Run(fmt.Sprint("samples=", samples), func(t *testing.T) {
			v, err := Verify(context.Background(), b, VerifyOptions{Samples: samples})
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := min(m.Parents, DefaultSamples)
			if samples > 0 {
				want = min(m.Parents, samples)
			}
			if v.Children != m.Children || v.Parents != m.Parents {
				t.Errorf("counted %d children and %d parents, manifest says %d and %d", v.Children, v.Parents, m.Children, m.Parents)
			}
			if v.SampledQueries != want || v.Unqueryable != 0 {
				t.Errorf("%d sampled queries and %d unqueryable parents, want %d and 0", v.SampledQueries, v.Unqueryable, want)
			}
			if v.ResolvedChildren < v.SampledQueries {
				t.Errorf("%d resolved children for %d queries: every query should hit at least its own parent's children", v.ResolvedChildren, v.SampledQueries)
			}
			if v.SelfHits == 0 {
				t.Errorf("no sampled parent came back for its own text: %+v", v)
			}
		})
	}
}

func TestVerifyRecountsTheStores(t *testing.T) {
	b := openBundle(t, corpus())
	children := b.Manifest.Children
	b.Manifest.Children++ // a manifest that disagrees with what OpenContext counted
	_, err := Verify(context.Background(), b, VerifyOptions{})
	want := fmt.Sprintf("child index holds %d children, the manifest says %d", children, children+1)
	if err == nil || err.Error() != want {
		t.Fatalf("Verify: %v, want %q", err, want)
	}
}

func TestVerifyRefusesAMissingBundle(t *testing.T) {
	for _, b := range []*bundle.Bundle{nil, {}} {
		if _, err := Verify(context.Background(), b, VerifyOptions{}); err == nil {
			t.Errorf("Verify(%v) passed", b)
		}
	}
}

// tampered is a revision's parts as verifyStores sees them, built from a
// real index so a test can break one part.
type tampered struct {
	manifest bundle.Manifest
	ix       *indexer.Index
	parents  []hierarchy.Parent
}

// newTampered indexes the corpus; its manifest agrees with the index.
func newTampered(t *testing.T) *tampered {
	ix := build(t, corpus())
	m := bundle.Manifest{Revision: "rev-1", Documents: ix.Documents, Parents: len(ix.Parents), Children: len(ix.Children)}
	return &tampered{manifest: m, ix: ix, parents: slices.Clone(ix.Parents)}
}

// verify runs verifyStores over every parent.
func (tp *tampered) verify(ctx context.Context) (Verification, error) {
	r := &retrieve.Retriever{Embedder: tp.ix.Embedder, Children: tp.ix.Store.(index.Searcher), Parents: parentstore.NewMemory(tp.parents)}
	return verifyStores(ctx, tp.manifest, r, parentIDs(tp.parents), VerifyOptions{Samples: 1000})
}

// airship returns the index in tp.parents of the first parent of the
// airship document, whose children share "zeppelin" with its next parent.
func (tp *tampered) airship(t *testing.T) int {
	i := slices.IndexFunc(tp.parents, func(p hierarchy.Parent) bool { return p.DocID == "airship.md" })
	if i < 0 || i+1 >= len(tp.parents) || tp.parents[i+1].DocID != "airship.md" {
		t.Fatal("the airship document should make at least two parents")
	}
	return i
}

func TestVerifyStoresFailures(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, tp *tampered) (want string)
	}{{
		name: "child index one child short",
		tamper: func(t *testing.T, tp *tampered) string {
			if err := tp.ix.Store.(*embedded.Store).Delete(context.Background(), []string{tp.ix.Children[0].ID}); err != nil {
				t.Fatal(err)
			}
			n := len(tp.ix.Children)
			return fmt.Sprintf("child index holds %d children, the manifest says %d", n-1, n)
		},
	}, {
		name: "parent store one parent short",
		tamper: func(t *testing.T, tp *tampered) string {
			tp.parents = tp.parents[1:]
			return fmt.Sprintf("parent store holds %d parents, the manifest says %d", len(tp.parents), len(tp.parents)+1)
		},
	}, {
		name: "hit child's parent missing from the parent store",
		tamper: func(t *testing.T, tp *tampered) string {
			i := tp.airship(t)
			missing := tp.parents[i].ID
			tp.parents = slices.Delete(tp.parents, i, i+1)
			tp.manifest.Parents-- // the counts agree; only the link is broken
			return fmt.Sprintf("points to parent %s, which is not in this revision's parent store", missing)
		},
	}, {
		name: "parent of another document",
		tamper: func(t *testing.T, tp *tampered) string {
			i := tp.airship(t)
			tp.parents[i].DocID = "other.md"
			return fmt.Sprintf(`is of document "airship.md", but its parent %s is of document "other.md" in the parent store`, tp.parents[i].ID)
		},
	}, {
		name: "parent that does not list its child",
		tamper: func(t *testing.T, tp *tampered) string {
			i := tp.airship(t)
			tp.parents[i].Children = nil
			return fmt.Sprintf("points to parent %s, which does not list it among its children", tp.parents[i].ID)
		},
	}, {
		name: "empty child index",
		tamper: func(t *testing.T, tp *tampered) string {
			empty, err := embedded.New(embedded.Options{})
			if err != nil {
				t.Fatal(err)
			}
			tp.ix.Store, tp.manifest.Children = empty, 0
			first := slices.Min(parentIDs(tp.parents))
			return fmt.Sprintf("query from parent %s returned no parent", first)
		},
	}, {
		name: "no parents",
		tamper: func(t *testing.T, tp *tampered) string {
			tp.parents, tp.manifest.Parents = nil, 0
			return "the revision holds no parents, so it can answer no query"
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp := newTampered(t)
			if _, err := tp.verify(context.Background()); err != nil {
				t.Fatalf("untampered revision: %v", err)
			}
			want := tc.tamper(t, tp)
			_, err := tp.verify(context.Background())
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("verify: %v\nwant an error containing %q", err, want)
			}
		})
	}
}

func TestVerifyStoresSkipsUnqueryableParents(t *testing.T) {
	tp := newTampered(t)
	tp.parents[0].Text = "# It is, as it was."
	v, err := tp.verify(context.Background())
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if v.Unqueryable != 1 || v.SampledQueries != len(tp.parents)-1 {
		t.Errorf("%d unqueryable and %d sampled, want 1 and %d", v.Unqueryable, v.SampledQueries, len(tp.parents)-1)
	}
	for i := range tp.parents {
		tp.parents[i].Text = "the and of"
	}
	if _, err := tp.verify(context.Background()); err == nil || !strings.Contains(err.Error(), "has a word a query can match") {
		t.Errorf("verify with no queryable parent: %v", err)
	}
}

func TestVerifyStoresHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newTampered(t).verify(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("verify with a cancelled context: %v", err)
	}
}

func TestSampleIDs(t *testing.T) {
	ids := []string{"p7", "p2", "p9", "p0", "p5", "p3", "p8", "p1", "p6", "p4"}
	tests := []struct {
		n    int
		want []string
	}{
		{1, []string{"p0"}},
		{3, []string{"p0", "p3", "p6"}},
		{4, []string{"p0", "p2", "p5", "p7"}},
		{10, []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}},
		{16, []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}},
	}
	for _, tc := range tests {
		if got := sampleIDs(ids, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("sampleIDs(%d) = %v, want %v", tc.n, got, tc.want)
		}
		reversed := slices.Clone(ids)
		slices.Reverse(reversed)
		if got := sampleIDs(reversed, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("sampleIDs(%d) of reordered ids = %v, want %v", tc.n, got, tc.want)
		}
	}
	if ids[0] != "p7" {
		t.Error("sampleIDs reordered its argument")
	}
}

func TestPassage(t *testing.T) {
	tests := []struct {
		text  string
		limit int
		want  string
	}{
		{"# Rollout\n\nA new index revision is built.", 2, "# Rollout A new"},
		{"one two three", 12, "one two three"},
		{"  the   cat\tsat on the mat  ", 2, "the cat sat"},
		{"It is, as it was. — ", 12, ""},
		{"", 12, ""},
	}
	for _, tc := range tests {
		if got := passage(tc.text, tc.limit); got != tc.want {
			t.Errorf("passage(%q, %d) = %q, want %q", tc.text, tc.limit, got, tc.want)
		}
	}
}
