package retrieve_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// adaptiveDocs are two documents of one parent each, one child a line:
// most lines of the first are about falcons, one line of the second is.
var adaptiveDocs = []hierarchy.Document{
	lineDoc("falcons", "Falcons",
		"The falcon dives at great speed.", "A falcon hunts other birds.", "Falcons nest on high cliffs.", "Owls hunt at night instead."),
	lineDoc("birds", "Birds",
		"Sparrows live in towns and parks.", "Gulls follow the fishing boats.", "A falcon once nested on a tower.", "Crows remember human faces."),
}

func TestAdaptiveMergesWhereEvidenceIsDenseAndStaysSmallElsewhere(t *testing.T) {
	ix := buildIndex(t, adaptiveDocs, lineBuilder(t), indexer.Options{})
	checkLineIndex(t, adaptiveDocs, ix)
	r := ix.Retriever()
	// A merge share of a half: the falcons parent, three of whose four
	// lines match, merges; the birds parent, one of four, stays small.
	opts := retrieve.Options{Mode: retrieve.ModeAdaptive, MaxParents: 3, Adaptive: retrieve.AdaptiveOptions{MergeShare: 0.5}}
	res, err := r.Retrieve(context.Background(), "falcon falcons", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d results, want 2: %+v", len(res), res)
	}
	whole := res[0]
	if whole.DocID != "falcons" || whole.Level != hierarchy.LevelParent || whole.Text != adaptiveDocs[0].Text || len(whole.Matches) != 3 || whole.Spans != nil {
		t.Errorf("first result %+v, want the whole falcons parent with its 3 matches", whole)
	}
	small := res[1]
	if small.DocID != "birds" || small.Level != hierarchy.LevelChild || small.Text != "A falcon once nested on a tower." || small.Trimmed {
		t.Errorf("second result %+v, want the lone falcon line of birds as a child", small)
	}
	if len(small.Spans) != 1 || small.Matches[0].Start != small.Spans[0].Start {
		t.Errorf("second result spans %v and matches %v, want the match's span", small.Spans, small.Matches)
	}

	opts.Adaptive.WindowSentences = 1
	res, err = r.Retrieve(context.Background(), "falcon falcons", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res[1].Text, "Gulls follow the fishing boats.\nA falcon once nested on a tower.\nCrows remember human faces."; res[1].Level != hierarchy.LevelWindow || got != want {
		t.Errorf("with a window of 1 sentence the second result is %s %q, want a window %q", res[1].Level, got, want)
	}

	opts.Adaptive = retrieve.AdaptiveOptions{MergeShare: 1}
	if res, err = r.Retrieve(context.Background(), "falcon falcons", opts); err != nil {
		t.Fatal(err)
	}
	if want := "The falcon dives at great speed. … A falcon hunts other birds. … Falcons nest on high cliffs."; res[0].Level != hierarchy.LevelChild || res[0].Text != want {
		t.Errorf("with a merge share of 1 the falcons parent is returned as %s %q, want its three children %q", res[0].Level, res[0].Text, want)
	}

	parents, err := r.Retrieve(context.Background(), "falcon falcons", retrieve.Options{MaxParents: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parents {
		if p.Level != hierarchy.LevelParent || p.Spans != nil {
			t.Errorf("mode Parents returned %s with spans %v, want whole parents", p.Level, p.Spans)
		}
	}
}

// sectionDoc is a Markdown page whose first section is two parents about
// falcons; a line of its second section mentions a falcon too.
var sectionDoc = hierarchy.Document{ID: "birds.md", Title: "Birds", Text: "# Birds\n\n## Falcons\n\n" +
	"The falcon dives at great speed. A falcon hunts other birds in the air.\n\n" +
	"Falcons nest on high cliffs. The young falcon learns to fly in spring.\n\n" +
	"## Others\n\nSparrows live in towns and parks. Gulls follow the fishing boats. " +
	"Crows remember human faces. A falcon once nested on a church tower. Owls hunt at night."}

// sectionPolicy cuts documents into sections, parents of about one
// paragraph and children of about one sentence.
func sectionPolicy(t *testing.T) *hierarchy.Builder {
	t.Helper()
	c, err := policy.Compile(&v1alpha1.ChunkingPolicySpec{
		Levels:  []v1alpha1.Level{v1alpha1.LevelSection, v1alpha1.LevelParent, v1alpha1.LevelChild},
		Section: &v1alpha1.ChunkSize{ChunkSize: 1000, MinChunkSize: 10},
		Parent:  &v1alpha1.ChunkSize{ChunkSize: 90}, Child: &v1alpha1.ChunkSize{ChunkSize: 40},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c.Builder
}

func TestAdaptiveClimbsToTheSectionThatHoldsTheEvidence(t *testing.T) {
	ix := buildIndex(t, []hierarchy.Document{sectionDoc}, sectionPolicy(t), indexer.Options{})
	// With a merge share of a half, one falcon sentence of five keeps the
	// others' parent small.
	opts := retrieve.Options{Mode: retrieve.ModeAdaptive, MaxParents: 5, Adaptive: retrieve.AdaptiveOptions{MergeShare: 0.5}}
	res, err := ix.Retriever().Retrieve(context.Background(), "falcon falcons", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 2 {
		t.Fatalf("%d results, want the falcons section and a window of the others: %+v", len(res), res)
	}
	section := res[0]
	if section.Level != hierarchy.LevelSection || !strings.Contains(section.Text, "## Falcons\n\nThe falcon dives") || strings.Contains(section.Text, "Sparrows") {
		t.Errorf("first result is %s %q, want the falcons section", section.Level, section.Text)
	}
	if len(section.Matches) < 3 {
		t.Errorf("the section holds %d matches, want those of both its parents", len(section.Matches))
	}
	for _, m := range section.Matches {
		if m.Start < 0 || !strings.Contains(strings.ToLower(string([]rune(section.Text)[m.Start:m.End])), "falcon") {
			t.Errorf("match %+v does not locate a falcon line in the section", m)
		}
	}
	rest := res[1]
	if rest.Level == hierarchy.LevelSection || !strings.Contains(rest.Text, "A falcon once nested") || strings.Contains(rest.Text, "Sparrows") {
		t.Errorf("second result is %s %q, want the lone falcon sentence of the others", rest.Level, rest.Text)
	}
	checkNoTextTwice(t, res)
}

// checkNoTextTwice fails when two results of one document cover the same
// code points of it.
func checkNoTextTwice(t *testing.T, res []retrieve.Result) {
	t.Helper()
	seen := map[string]map[int]bool{}
	for _, r := range res {
		if seen[r.DocID] == nil {
			seen[r.DocID] = map[int]bool{}
		}
		spans := r.Spans
		if spans == nil {
			spans = []retrieve.Interval{{Start: 0, End: utf8.RuneCountInString(r.Text)}}
		}
		for _, s := range spans {
			for i := s.Start; i < s.End; i++ {
				if seen[r.DocID][r.Start+i] {
					t.Fatalf("code point %d of %s is returned twice", r.Start+i, r.DocID)
				}
				seen[r.DocID][r.Start+i] = true
			}
		}
	}
}

func TestAdaptiveKeepsToTheBudget(t *testing.T) {
	ix := buildIndex(t, []hierarchy.Document{sectionDoc}, sectionPolicy(t), indexer.Options{})
	for _, budget := range []int{8, 30, 60, 120, 400} {
		res, err := ix.Retriever().Retrieve(context.Background(), "falcon falcons", retrieve.Options{Mode: retrieve.ModeAdaptive, MaxParents: 5, Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, r := range res {
			total += utf8.RuneCountInString(r.Text)
			if r.Level == "" {
				t.Errorf("budget %d: a result names no level", budget)
			}
		}
		if total > budget || len(res) == 0 {
			t.Errorf("budget %d: %d results of %d code points", budget, len(res), total)
		}
		checkNoTextTwice(t, res)
	}
}
