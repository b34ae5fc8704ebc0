package retrieve_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/parentstore"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// newBuilder returns a parent-child builder of recursive splitters with the
// given chunk sizes in code points.
func newBuilder(tb testing.TB, parentSize, childSize, childOverlap int) *hierarchy.Builder {
	tb.Helper()
	parent, err := split.NewRecursive(split.DefaultOptions(parentSize, 0))
	if err != nil {
		tb.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(childSize, childOverlap))
	if err != nil {
		tb.Fatal(err)
	}
	return &hierarchy.Builder{Strategy: chunking.ParentChild, Revision: "test", Parent: parent, Child: child}
}

// buildIndex indexes docs with real splitters and a fresh lexical embedder.
func buildIndex(tb testing.TB, docs []hierarchy.Document, b hierarchy.DocumentSplitter, opts indexer.Options) *indexer.Index {
	tb.Helper()
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		tb.Fatal(err)
	}
	ix, err := indexer.Build(context.Background(), docs, b, lex, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

// lineDoc makes a document whose lines are meant to be one child each:
// every line is 20 to 40 code points, so with lineBuilder two lines never
// fit one child and the whole document fits one parent.
func lineDoc(id, title string, lines ...string) hierarchy.Document {
	return hierarchy.Document{ID: id, Title: title, Text: strings.Join(lines, "\n")}
}

// lineBuilder makes one parent per lineDoc and one child per line.
func lineBuilder(tb testing.TB) *hierarchy.Builder { return newBuilder(tb, 1000, 40, 0) }

// checkLineIndex fails unless every document became one parent and every
// line one child, the premise of the hand-made corpora below.
func checkLineIndex(tb testing.TB, docs []hierarchy.Document, ix *indexer.Index) {
	tb.Helper()
	if len(ix.Parents) != len(docs) {
		tb.Fatalf("got %d parents for %d documents", len(ix.Parents), len(docs))
	}
	lines := 0
	for _, d := range docs {
		lines += len(strings.Split(d.Text, "\n"))
	}
	if len(ix.Children) != lines {
		tb.Fatalf("got %d children for %d lines", len(ix.Children), lines)
	}
}

// parentOf returns the parent of the document docID.
func parentOf(tb testing.TB, ix *indexer.Index, docID string) hierarchy.Parent {
	tb.Helper()
	for _, p := range ix.Parents {
		if p.DocID == docID {
			return p
		}
	}
	tb.Fatalf("no parent for document %s", docID)
	return hierarchy.Parent{}
}

// zebraDocs: document a has three strong "zebra" children of different
// strengths and one without,
// b and c one weaker "zebra" child each, d none.
func zebraDocs() []hierarchy.Document {
	return []hierarchy.Document{
		lineDoc("a", "", "zebra zebra zebra alpha bravo", "zebra zebra charlie delta echo", "zebra zebra zebra zebra foxtrot", "golf hotel india juliet kilo"),
		lineDoc("b", "", "zebra lima mike november oscar", "papa quebec romeo sierra tango"),
		lineDoc("c", "", "zebra uniform victor whiskey xray", "yankee apple banana cherry grape"),
		lineDoc("d", "", "lemon mango nectar olive peach", "pear plum quince raisin melon"),
	}
}

func zebraIndex(tb testing.TB) *indexer.Index {
	docs := zebraDocs()
	ix := buildIndex(tb, docs, lineBuilder(tb), indexer.Options{})
	checkLineIndex(tb, docs, ix)
	return ix
}

func mustRetrieve(tb testing.TB, r *retrieve.Retriever, query string, opts retrieve.Options) []retrieve.Result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := r.Retrieve(ctx, query, opts)
	if err != nil {
		tb.Fatalf("Retrieve(%q): %v", query, err)
	}
	return res
}

func docIDs(results []retrieve.Result) []string {
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = r.DocID
	}
	return out
}

func TestRetrieveReturnsParentsNotChildren(t *testing.T) {
	ix := zebraIndex(t)
	childText := map[string]string{}
	childParent := map[string]string{}
	for _, c := range ix.Children {
		childText[c.ID], childParent[c.ID] = c.Text, c.ParentID
	}
	res := mustRetrieve(t, ix.Retriever(), "zebra", retrieve.Options{MaxParents: 3})
	if len(res) != 3 {
		t.Fatalf("got %d results, want 3: %v", len(res), docIDs(res))
	}
	a := parentOf(t, ix, "a")
	if res[0].ParentID != a.ID || res[0].Text != a.Text {
		t.Fatalf("first result is %s %q, want parent %s %q", res[0].ParentID, res[0].Text, a.ID, a.Text)
	}
	// The parent holds its non-matching line too: the reader gets the
	// context around the hits, not the hits alone.
	if !strings.Contains(res[0].Text, "golf hotel india juliet kilo") {
		t.Errorf("parent text lacks its non-matching child: %q", res[0].Text)
	}
	for _, r := range res {
		p := parentOf(t, ix, r.DocID)
		if r.ParentID != p.ID || r.Text != p.Text || r.Trimmed {
			t.Errorf("result %s is not the whole parent %s", r.ParentID, p.ID)
		}
		if _, isChild := childText[r.ParentID]; isChild {
			t.Errorf("result id %s is a child id", r.ParentID)
		}
		runes := []rune(r.Text)
		for _, m := range r.Matches {
			if childParent[m.ChildID] != r.ParentID {
				t.Errorf("match %s of %s belongs to parent %s", m.ChildID, r.ParentID, childParent[m.ChildID])
			}
			if got := string(runes[m.Start:m.End]); got != childText[m.ChildID] {
				t.Errorf("match span [%d,%d) of %s is %q, want the child text %q", m.Start, m.End, r.ParentID, got, childText[m.ChildID])
			}
			if utf8.RuneCountInString(childText[m.ChildID]) >= len(runes) {
				t.Errorf("child %s is not smaller than its parent", m.ChildID)
			}
		}
	}
}

func TestRetrieveDeduplicatesParents(t *testing.T) {
	ix := zebraIndex(t)
	res := mustRetrieve(t, ix.Retriever(), "zebra", retrieve.Options{ChildTopK: 20, MaxParents: 3})
	seen := map[string]bool{}
	for _, r := range res {
		if seen[r.ParentID] {
			t.Errorf("parent %s returned twice", r.ParentID)
		}
		seen[r.ParentID] = true
	}
	if res[0].DocID != "a" || len(res[0].Matches) != 3 {
		t.Fatalf("first result: doc %s with %d matches, want doc a with its 3 zebra children", res[0].DocID, len(res[0].Matches))
	}
	for i := 1; i < len(res[0].Matches); i++ {
		if !(res[0].Matches[i].Score < res[0].Matches[i-1].Score) {
			t.Errorf("matches of a not strictly best first: %+v", res[0].Matches)
		}
	}
	for _, r := range res {
		for i := 1; i < len(r.Matches); i++ {
			if r.Matches[i].Score > r.Matches[i-1].Score {
				t.Errorf("matches of %s not best first: %v", r.DocID, r.Matches)
			}
		}
		if r.Score != r.Matches[0].Score {
			t.Errorf("Max aggregation: parent %s scores %v, best child %v", r.DocID, r.Score, r.Matches[0].Score)
		}
	}
	for i := 1; i < len(res); i++ {
		if res[i].Score > res[i-1].Score {
			t.Errorf("results not best first: %v", docIDs(res))
		}
	}
}

func TestRetrieveOverFetchesUntilMaxParents(t *testing.T) {
	ix := zebraIndex(t)
	ctx := context.Background()
	r := ix.Retriever()
	qv, err := r.Embedder.EmbedQuery(ctx, "zebra")
	if err != nil {
		t.Fatal(err)
	}
	// The premise: the top two children both belong to document a.
	top, err := ix.Store.(index.Searcher).Search(ctx, index.SearchRequest{Vector: qv, TopK: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := parentOf(t, ix, "a")
	if len(top) != 2 || top[0].ParentID != a.ID || top[1].ParentID != a.ID {
		t.Fatalf("premise broken: top 2 children %+v, want both of parent %s", top, a.ID)
	}
	res := mustRetrieve(t, r, "zebra", retrieve.Options{ChildTopK: 2, MaxParents: 3})
	got := docIDs(res)
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("ChildTopK 2, MaxParents 3: got documents %v, want a, b, c", docIDs(res))
	}
	if res[0].DocID != "a" {
		t.Errorf("best parent is %s, want a", res[0].DocID)
	}
	// Fewer parents asked: exactly that many, best first.
	if res := mustRetrieve(t, r, "zebra", retrieve.Options{ChildTopK: 2, MaxParents: 2}); len(res) != 2 || res[0].DocID != "a" {
		t.Errorf("MaxParents 2: got %v", docIDs(res))
	}
}

// countingStore counts the searches sent to a real store.
type countingStore struct {
	index.Searcher
	searches int
	topKs    []int
}

func (c *countingStore) Search(ctx context.Context, req index.SearchRequest) ([]index.Hit, error) {
	c.searches++
	c.topKs = append(c.topKs, req.TopK)
	return c.Searcher.Search(ctx, req)
}

func TestRetrieveExhaustionReturnsWhatExists(t *testing.T) {
	ix := zebraIndex(t)
	store := &countingStore{Searcher: ix.Store.(index.Searcher)}
	r := &retrieve.Retriever{Embedder: ix.Embedder, Children: store, Parents: parentstore.NewMemory(ix.Parents)}
	res := mustRetrieve(t, r, "zebra", retrieve.Options{ChildTopK: 1, MaxParents: 10})
	got := docIDs(res)
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("got documents %v, want the 3 that match", docIDs(res))
	}
	// Doubling from 1 over 10 children needs at most 1+ceil(log2(10)) searches.
	if limit := 1 + int(math.Ceil(math.Log2(float64(len(ix.Children))))); store.searches > limit {
		t.Errorf("%d searches (top-k %v), want at most %d", store.searches, store.topKs, limit)
	}
	for _, k := range store.topKs {
		if k > len(ix.Children) {
			t.Errorf("asked for top %d of %d children", k, len(ix.Children))
		}
	}
	// Every child matches: the search reaches the whole index and stops.
	all := []hierarchy.Document{
		lineDoc("m", "", "common alpha bravo charlie", "common delta echo foxtrot"),
		lineDoc("n", "", "common golf hotel india", "common juliet kilo lima"),
	}
	ax := buildIndex(t, all, lineBuilder(t), indexer.Options{})
	checkLineIndex(t, all, ax)
	if res := mustRetrieve(t, ax.Retriever(), "common", retrieve.Options{ChildTopK: 1, MaxParents: 5}); len(res) != 2 {
		t.Errorf("common: got %v, want both documents", docIDs(res))
	}
	// A single matching parent with a large MaxParents.
	if res := mustRetrieve(t, r, "lemon", retrieve.Options{ChildTopK: 1, MaxParents: 50}); len(res) != 1 || res[0].DocID != "d" {
		t.Errorf("lemon: got %v, want [d]", docIDs(res))
	}
}

func TestRetrieveNoMatchingTerm(t *testing.T) {
	ix := zebraIndex(t)
	for _, q := range []string{"qwxzzy", "the and of", ""} {
		res, err := ix.Retriever().Retrieve(context.Background(), q, retrieve.Options{})
		if err != nil {
			t.Errorf("Retrieve(%q): %v", q, err)
		}
		if len(res) != 0 {
			t.Errorf("Retrieve(%q) = %v, want nothing", q, docIDs(res))
		}
	}
}

func TestRetrieveEmptyIndex(t *testing.T) {
	ix := buildIndex(t, []hierarchy.Document{{ID: "empty", Text: "   "}}, lineBuilder(t), indexer.Options{})
	if len(ix.Children) != 0 {
		t.Fatalf("premise: %d children", len(ix.Children))
	}
	res, err := ix.Retriever().Retrieve(context.Background(), "zebra", retrieve.Options{})
	if err != nil || len(res) != 0 {
		t.Fatalf("got %v, %v; want no results and no error", res, err)
	}
}

func TestRetrieveMissingParentIsAnError(t *testing.T) {
	ix := zebraIndex(t)
	b := parentOf(t, ix, "b")
	var kept []hierarchy.Parent
	for _, p := range ix.Parents {
		if p.ID != b.ID {
			kept = append(kept, p)
		}
	}
	r := &retrieve.Retriever{Embedder: ix.Embedder, Children: ix.Store.(index.Searcher), Parents: parentstore.NewMemory(kept)}
	res, err := r.Retrieve(context.Background(), "zebra", retrieve.Options{MaxParents: 3})
	if !errors.Is(err, parentstore.ErrNotFound) {
		t.Fatalf("got %v, %v; want an error wrapping parentstore.ErrNotFound", docIDs(res), err)
	}
	if !strings.Contains(err.Error(), b.ID) {
		t.Errorf("error %q does not name the missing parent %s", err, b.ID)
	}
	// A query that does not reach the missing parent still works.
	if res := mustRetrieve(t, r, "lemon", retrieve.Options{}); len(res) != 1 || res[0].DocID != "d" {
		t.Errorf("lemon: got %v, want [d]", docIDs(res))
	}
}

// aggregationDocs: A has one very strong and two weak children; B two
// medium ones; C six weak ones. Max, Mean and Sum each put another first.
func aggregationDocs() []hierarchy.Document {
	weak := func(filler string) string { return "zebra " + filler }
	return []hierarchy.Document{
		lineDoc("A", "", "zebra zebra zebra zebra zebra",
			weak("alpha bravo charlie delta echo"), weak("foxtrot golf hotel india juliet")),
		lineDoc("B", "", "zebra zebra kilolimamikenovember", "zebra zebra oscarpapaquebecromeo"),
		lineDoc("C", "", weak("sierra tango uniform victor xray"), weak("yankee apple banana cherry grape"),
			weak("lemon mango nectar olive peach"), weak("pear plum quince raisin melon"),
			weak("kiwi lime date fig guava jujube"), weak("acorn birch cedar dogwood elm")),
	}
}

func TestRetrieveAggregationChangesOrder(t *testing.T) {
	docs := aggregationDocs()
	ix := buildIndex(t, docs, lineBuilder(t), indexer.Options{})
	checkLineIndex(t, docs, ix)
	r := ix.Retriever()
	want := map[retrieve.Aggregation][]string{
		retrieve.AggregateMax:  {"A", "B", "C"},
		retrieve.AggregateMean: {"B", "A", "C"},
		retrieve.AggregateSum:  {"C", "A", "B"},
	}
	for agg, order := range want {
		res := mustRetrieve(t, r, "zebra", retrieve.Options{ChildTopK: 100, MaxParents: 3, Aggregation: agg})
		if got := docIDs(res); !slices.Equal(got, order) {
			t.Errorf("%s: got order %v, want %v", agg, got, order)
		}
		for _, x := range res {
			var sum, best float32
			for _, m := range x.Matches {
				sum += m.Score
				best = max(best, m.Score)
			}
			wantScore := map[retrieve.Aggregation]float32{
				retrieve.AggregateMax: best, retrieve.AggregateSum: sum,
				retrieve.AggregateMean: sum / float32(len(x.Matches)),
			}[agg]
			if math.Abs(float64(x.Score-wantScore)) > 1e-5 {
				t.Errorf("%s: parent %s scores %v, want %v from its matches", agg, x.DocID, x.Score, wantScore)
			}
		}
	}
	// The default is Max.
	if got := docIDs(mustRetrieve(t, r, "zebra", retrieve.Options{ChildTopK: 100})); !slices.Equal(got, want[retrieve.AggregateMax]) {
		t.Errorf("default aggregation: got %v, want Max order", got)
	}
}

// budgetIndex is a synthetic corpus large enough to make budgets bite.
func budgetIndex(tb testing.TB) (*indexer.Index, *synthtest.Corpus) {
	gen := synthtest.New(7, 800)
	docs := gen.Documents(60)
	return buildIndex(tb, docs, newBuilder(tb, 400, 80, 10), indexer.Options{}), gen
}

func TestRetrieveBudgetNeverExceeded(t *testing.T) {
	ix, gen := budgetIndex(t)
	r := ix.Retriever()
	parents := map[string]hierarchy.Parent{}
	for _, p := range ix.Parents {
		parents[p.ID] = p
	}
	childText := map[string]string{}
	for _, c := range ix.Children {
		childText[c.ID] = c.Text
	}
	tokens, err := split.TokenLength("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]split.LengthFunc{"codepoints": split.CodePoints, "tokens": tokens}
	budgets := []int{1, 3, 8, 15, 30, 60, 100, 150, 250, 400, 700, 1200, 5000}
	queries := make([]string, 40)
	for i := range queries {
		queries[i] = gen.Query(1, 5)
	}
	nonEmpty, trimmed := 0, 0
	for name, length := range units {
		for _, q := range queries {
			for _, maxParents := range []int{1, 3, 8} {
				base := retrieve.Options{MaxParents: maxParents, Length: length}
				whole := mustRetrieve(t, r, q, base)
				checkWholeParents(t, whole, parents)
				for _, budget := range budgets {
					opts := base
					opts.Budget = budget
					ctx := fmt.Sprintf("%s q=%q maxParents=%d budget=%d", name, q, maxParents, budget)
					res, err := r.Retrieve(context.Background(), q, opts)
					var small *retrieve.BudgetTooSmallError
					if errors.As(err, &small) {
						// Too small for any text: the error says what would
						// do, and that budget returns something.
						if small.Need <= budget || len(whole) == 0 {
							t.Errorf("%s: %v, yet need %d <= budget or no parent at all", ctx, err, small.Need)
						}
						opts.Budget = small.Need
						if len(mustRetrieve(t, r, q, opts)) == 0 {
							t.Errorf("%s: the budget %d the error names returns nothing", ctx, small.Need)
						}
						continue
					}
					if err != nil {
						t.Fatalf("%s: %v", ctx, err)
					}
					total := 0
					for _, x := range res {
						total += length(x.Text)
						checkBudgetedResult(t, ctx, x, parents[x.ParentID])
						if x.Trimmed {
							trimmed++
						}
					}
					if total > budget {
						t.Errorf("%s: total length %d exceeds the budget", ctx, total)
					}
					if !isSubsequence(docParentIDs(res), docParentIDs(whole)) {
						t.Errorf("%s: budgeted parents %v are not a subsequence of %v", ctx, docParentIDs(res), docParentIDs(whole))
					}
					if len(whole) > 0 && length(childText[whole[0].Matches[0].ChildID]) <= budget && len(res) == 0 {
						t.Errorf("%s: the best child fits the budget but nothing was returned", ctx)
					}
					if len(res) > 0 {
						nonEmpty++
					}
				}
			}
		}
	}
	if nonEmpty == 0 || trimmed == 0 {
		t.Fatalf("the sweep exercised nothing: %d non-empty results, %d trimmed", nonEmpty, trimmed)
	}
}

// checkWholeParents fails unless every result is its parent, untrimmed.
func checkWholeParents(tb testing.TB, res []retrieve.Result, parents map[string]hierarchy.Parent) {
	tb.Helper()
	for _, x := range res {
		p, ok := parents[x.ParentID]
		if !ok || x.Text != p.Text || x.Trimmed || x.Spans != nil || x.Start != p.Start || x.DocID != p.DocID {
			tb.Errorf("budget 0: result %s is not its whole parent", x.ParentID)
		}
	}
}

// checkBudgetedResult fails unless a result's text is its parent or the
// parent's spans, in order, joined by the ellipsis.
func checkBudgetedResult(tb testing.TB, ctx string, x retrieve.Result, p hierarchy.Parent) {
	tb.Helper()
	if !x.Trimmed {
		if x.Text != p.Text {
			tb.Errorf("%s: untrimmed result %s differs from its parent", ctx, x.ParentID)
		}
		return
	}
	runes := []rune(p.Text)
	parts := make([]string, len(x.Spans))
	for i, s := range x.Spans {
		if s.Start < 0 || s.End > len(runes) || s.Start >= s.End || (i > 0 && s.Start <= x.Spans[i-1].End) {
			tb.Errorf("%s: bad spans %v of %s (%d code points)", ctx, x.Spans, x.ParentID, len(runes))
			return
		}
		parts[i] = string(runes[s.Start:s.End])
	}
	if got := strings.Join(parts, retrieve.Ellipsis); got != x.Text {
		tb.Errorf("%s: trimmed text %q is not its spans %q", ctx, x.Text, got)
	}
}

func docParentIDs(res []retrieve.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.ParentID
	}
	return out
}

// isSubsequence reports whether sub appears in all in order.
func isSubsequence(sub, all []string) bool {
	i := 0
	for _, s := range all {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}

func TestRetrieveBudgetZeroIsWholeParents(t *testing.T) {
	ix, gen := budgetIndex(t)
	parents := map[string]hierarchy.Parent{}
	for _, p := range ix.Parents {
		parents[p.ID] = p
	}
	got := 0
	for range 20 {
		res := mustRetrieve(t, ix.Retriever(), gen.Query(1, 4), retrieve.Options{Budget: 0})
		checkWholeParents(t, res, parents)
		got += len(res)
	}
	if got == 0 {
		t.Fatal("no query returned anything")
	}
}

// contextDocs: z is titled Zebra and holds a zebra child and one without
// the word; y is untitled with a zebra child of the same length and one
// without. Neither non-zebra child mentions zebra.
func contextDocs() []hierarchy.Document {
	return []hierarchy.Document{
		lineDoc("z", "Zebra", "zebra alpha bravo charlie", "delta echo foxtrot golf"),
		lineDoc("y", "", "zebra hotel india juliet", "kilo lima mike november"),
		lineDoc("x", "", "oscar papa quebec romeo", "sierra tango uniform victor"),
	}
}

// childHits searches children directly and returns the score of each hit
// by child text.
func childHits(tb testing.TB, ix *indexer.Index, query string) map[string]float32 {
	tb.Helper()
	ctx := context.Background()
	qv, err := ix.Embedder.EmbedQuery(ctx, query)
	if err != nil {
		tb.Fatal(err)
	}
	hits, err := ix.Store.(index.Searcher).Search(ctx, index.SearchRequest{Vector: qv, TopK: 100})
	if err != nil {
		tb.Fatal(err)
	}
	text := map[string]string{}
	for _, c := range ix.Children {
		text[c.ID] = c.Text
	}
	out := map[string]float32{}
	for _, h := range hits {
		out[text[h.ID]] = h.Score
	}
	return out
}

func TestContextWeightChangesScores(t *testing.T) {
	docs := contextDocs()
	plain := buildIndex(t, docs, lineBuilder(t), indexer.Options{ContextWeight: 0})
	withCtx := buildIndex(t, docs, lineBuilder(t), indexer.Options{ContextWeight: 0.8})
	checkLineIndex(t, docs, plain)

	// Weight 0: a child scores its own BM25, query·doc of the same embedder.
	lex := plain.Embedder.(*bm25.Lexical)
	ctx := context.Background()
	qv, err := lex.EmbedQuery(ctx, "zebra")
	if err != nil {
		t.Fatal(err)
	}
	hits := childHits(t, plain, "zebra")
	if len(hits) != 2 {
		t.Fatalf("weight 0: %d hits %v, want the 2 zebra children", len(hits), hits)
	}
	for text, score := range hits {
		dv, err := lex.EmbedDocuments(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		bm25 := qv.Sparse.Dot(*dv[0].Sparse)
		if bm25 <= 0 || math.Abs(float64(score-bm25)) > 1e-6*float64(bm25) {
			t.Errorf("weight 0: %q scores %v, its BM25 is %v", text, score, bm25)
		}
	}
	const zChild, yChild, zOther = "zebra alpha bravo charlie", "zebra hotel india juliet", "delta echo foxtrot golf"
	if hits[zChild] != hits[yChild] {
		t.Errorf("weight 0: equal-length zebra children score %v and %v", hits[zChild], hits[yChild])
	}

	// Weight 0.8: the title and parent text count, so z's zebra child
	// outranks y's, and z's other child matches through its context.
	ctxHits := childHits(t, withCtx, "zebra")
	if !(ctxHits[zChild] > ctxHits[yChild]) {
		t.Errorf("weight 0.8: titled child %v does not outrank untitled %v", ctxHits[zChild], ctxHits[yChild])
	}
	if ctxHits[zOther] <= 0 {
		t.Errorf("weight 0.8: %q, whose parent and title hold zebra, does not match", zOther)
	}
	if _, ok := hits[zOther]; ok {
		t.Errorf("weight 0: %q matches without holding the term", zOther)
	}
	if _, ok := ctxHits["oscar papa quebec romeo"]; ok {
		t.Error("weight 0.8: a child with no zebra in itself, its parent or title matches")
	}
	if ctxHits[zChild] <= hits[zChild] {
		t.Errorf("weight 0.8 score %v not above weight 0 score %v", ctxHits[zChild], hits[zChild])
	}
	// Retrieval follows: z first.
	if res := mustRetrieve(t, withCtx.Retriever(), "zebra", retrieve.Options{}); len(res) != 2 || res[0].DocID != "z" {
		t.Errorf("weight 0.8: got %v, want z then y", docIDs(res))
	}
}
