package segment_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/embedded"
	"github.com/parentrag/parentrag/internal/index/segment"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// corpusParent is one parent of a test corpus: its context text and its
// children's texts.
type corpusParent struct {
	context  string
	children []string
}

// randomCorpus returns n parents of random words drawn from a vocabulary
// whose frequencies fall off as a power law, so that some terms are in
// most texts and most in few; children are stretches of their parent's
// words, with now and then a word of their own (as a heading would be).
func randomCorpus(rng *rand.Rand, n int) []corpusParent {
	words := make([]string, 300)
	for i := range words {
		words[i] = randomWord(rng)
	}
	pick := func() string { return words[int(float64(len(words))*math.Pow(rng.Float64(), 2.5))] }
	out := make([]corpusParent, n)
	for p := range out {
		text := make([]string, 20+rng.IntN(120))
		for i := range text {
			text[i] = pick()
		}
		out[p].context = strings.Join(text, " ")
		children := rng.IntN(5) // some parents have no children
		if rng.IntN(8) == 0 {
			children = 9 + rng.IntN(24) // more than one child to a group (see childGroup)
		}
		for c := children; c > 0; c-- {
			lo := rng.IntN(len(text))
			hi := min(len(text), lo+1+rng.IntN(30))
			child := strings.Join(text[lo:hi], " ")
			if rng.IntN(4) == 0 {
				child = randomWord(rng) + " " + child
			}
			out[p].children = append(out[p].children, child)
		}
	}
	return out
}

// randomWord returns a lower-case word of 3 to 8 letters.
func randomWord(rng *rand.Rand) string {
	b := make([]byte, 3+rng.IntN(6))
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

// childID is the id of the c-th child of the p-th parent.
func childID(p, c int) string { return fmt.Sprintf("child-%07d-%d", p, c) }

// parentID is the id of parent p of a test corpus.
func parentID(p int) string { return fmt.Sprintf("parent-%07d", p) }

// docID is the id of parent p's document in a test corpus: three parents
// a document.
func docID(p int) string { return fmt.Sprintf("doc-%06d", p/3) }

// analysedParent is one parent of a corpus as a build holds it: the
// analysis of its context and of each of its children's texts.
type analysedParent struct {
	context  bm25.Analysis
	children []bm25.Analysis
}

// analyse returns the analyses of corpus.
func analyse(corpus []corpusParent) []analysedParent {
	var scratch bm25.AnalysisScratch
	out := make([]analysedParent, len(corpus))
	for p, parent := range corpus {
		out[p].context = scratch.AnalyzeCounts(parent.context)
		for _, c := range parent.children {
			out[p].children = append(out[p].children, scratch.AnalyzeCounts(c))
		}
	}
	return out
}

// indexedStore builds what the indexer builds from the analyses: a
// lexical embedder fitted on every child, and an embedded store holding
// each child's BM25 vector plus weight times its parent's context vector.
func indexedStore(tb testing.TB, corpus []analysedParent, weight float32) (*bm25.Lexical, *embedded.Store) {
	tb.Helper()
	stats := bm25.NewCorpusStats()
	for _, p := range corpus {
		for _, a := range p.children {
			stats.Count(a)
		}
	}
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		tb.Fatal(err)
	}
	if err := lex.FitCorpus(stats); err != nil {
		tb.Fatal(err)
	}
	store, err := embedded.New(embedded.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	var scratch bm25.AnalysisScratch
	var records []index.Record
	for p, parent := range corpus {
		ctxVec, err := lex.EmbedAnalysis(&parent.context, &scratch)
		if err != nil {
			tb.Fatal(err)
		}
		for c := range parent.children {
			own, err := lex.EmbedAnalysis(&parent.children[c], &scratch)
			if err != nil {
				tb.Fatal(err)
			}
			sum := *own
			if weight > 0 {
				sum = vector.AppendScaled(vector.Sparse{}, *own, *ctxVec, weight)
			}
			records = append(records, index.Record{ID: childID(p, c), ParentID: parentID(p), DocID: docID(p), Ordinal: c, Vector: vector.Vector{Sparse: &sum}})
		}
		if len(records) >= 4096 {
			if err := store.Upsert(context.Background(), records); err != nil {
				tb.Fatal(err)
			}
			records = records[:0]
		}
	}
	if err := store.Upsert(context.Background(), records); err != nil {
		tb.Fatal(err)
	}
	return lex, store
}

// segmentSet writes the analyses into segments cut at the given parents,
// opens them and returns their set, and the segments' bytes.
func segmentSet(tb testing.TB, corpus []analysedParent, cuts []int, weight float32) (*segment.Set, int) {
	tb.Helper()
	var segs []*segment.Segment
	size := 0
	lo := 0
	for _, hi := range append(cuts, len(corpus)) {
		data := segmentBytes(tb, corpus, lo, hi, weight)
		s, err := segment.Open(data)
		if err != nil {
			tb.Fatal(err)
		}
		segs = append(segs, s)
		size += len(data)
		lo = hi
	}
	set, err := segment.NewSet(segs, bm25.DefaultK1, bm25.DefaultB, weight)
	if err != nil {
		tb.Fatal(err)
	}
	return set, size
}

// segmentBytes returns the segment of the parents lo to hi of corpus.
func segmentBytes(tb testing.TB, corpus []analysedParent, lo, hi int, weight float32) []byte {
	tb.Helper()
	return writeParents(tb, segment.NewWriter(weight > 0), corpus, lo, hi)
}

// writeParents adds the parents lo to hi of corpus, and their children,
// to w and returns the segment's bytes.
func writeParents(tb testing.TB, w *segment.Writer, corpus []analysedParent, lo, hi int) []byte {
	tb.Helper()
	for p := lo; p < hi; p++ {
		if err := w.AddParent(parentID(p), docID(p), corpus[p].context); err != nil {
			tb.Fatal(err)
		}
		for c, a := range corpus[p].children {
			if err := w.AddChild(childID(p, c), c, a); err != nil {
				tb.Fatal(err)
			}
		}
	}
	data, err := w.AppendTo(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// randomQuery returns 1 to 8 words of the corpus, now and then one it
// lacks.
func randomQuery(rng *rand.Rand, corpus []corpusParent) string {
	var words []string
	for n := 1 + rng.IntN(8); n > 0; n-- {
		if rng.IntN(10) == 0 {
			words = append(words, randomWord(rng))
			continue
		}
		p := corpus[rng.IntN(len(corpus))]
		text := strings.Fields(p.context)
		words = append(words, text[rng.IntN(len(text))])
	}
	return strings.Join(words, " ")
}

// TestSetScoresAsTheIndexedVectors checks, over random corpora cut into
// segments in random places, that a set's statistics are exactly those
// of a fit over every child, and that its search returns the hits of the
// embedded store holding the vectors the indexer computes, exhaustively
// and pruned: the same ids, in the same order, with the same scores bit
// for bit.
func TestSetScoresAsTheIndexedVectors(t *testing.T) {
	ctx := context.Background()
	for trial := range 12 {
		rng := rand.New(rand.NewPCG(uint64(trial), 7))
		corpus := randomCorpus(rng, 20+rng.IntN(200))
		var cuts []int
		for p := 1; p < len(corpus); p++ {
			if rng.IntN(25) == 0 {
				cuts = append(cuts, p)
			}
		}
		if trial%3 == 0 {
			cuts = append(cuts, len(corpus)) // an empty last segment
		}
		analysed := analyse(corpus)
		for _, weight := range []float32{0, 0.8, 1.7} {
			lex, store := indexedStore(t, analysed, weight)
			set, _ := segmentSet(t, analysed, cuts, weight)
			want, err := lex.MarshalStats()
			if err != nil {
				t.Fatal(err)
			}
			got, err := set.Lexical().MarshalStats()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("trial %d, weight %v: the set's statistics differ from a fit over every child", trial, weight)
			}
			for range 40 {
				text := randomQuery(rng, corpus)
				q, err := set.Lexical().EmbedQuery(ctx, text)
				if err != nil {
					t.Fatal(err)
				}
				k := []int{1, 3, 20, 10000}[rng.IntN(4)]
				wantHits, err := store.Search(ctx, index.SearchRequest{Vector: q, TopK: k})
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("trial %d, weight %v, query %q, k %d", trial, weight, text, k)
				exhaustive, err := set.SearchExhaustive(ctx, q.Sparse, k)
				if err != nil {
					t.Fatal(err)
				}
				compareHits(t, what+", exhaustive", exhaustive, wantHits)
				wantKept, err := store.SearchFiltered(ctx, index.SearchRequest{Vector: q, TopK: k}, func(h index.Hit) bool { return keptID(h.ID) })
				if err != nil {
					t.Fatal(err)
				}
				keep := func(h segment.Hit) bool { return keptID(h.ID) }
				exhaustiveKept, err := set.SearchExhaustiveFiltered(ctx, q.Sparse, k, keep)
				if err != nil {
					t.Fatal(err)
				}
				compareHits(t, what+", exhaustive, filtered", exhaustiveKept, wantKept)
				for _, seeds := range []int{0, 3, 160} {
					set.SeedParents(seeds)
					pruned, err := set.Search(ctx, q.Sparse, k)
					if err != nil {
						t.Fatal(err)
					}
					compareHits(t, fmt.Sprintf("%s, pruned, %d seeds", what, seeds), pruned, wantHits)
					prunedKept, err := set.SearchFiltered(ctx, q.Sparse, k, keep)
					if err != nil {
						t.Fatal(err)
					}
					compareHits(t, fmt.Sprintf("%s, pruned, %d seeds, filtered", what, seeds), prunedKept, wantKept)
				}
			}
		}
	}
}

// keptID is the filter of the filtered searches: it keeps about two
// children in three, by their ids alone.
func keptID(id string) bool { return id != "" && id[len(id)-1]%3 != 0 }

// compareHits fails unless got and want name the same children in the
// same order with bitwise equal scores.
func compareHits(t *testing.T, what string, got []segment.Hit, want []index.Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || math.Float32bits(got[i].Score) != math.Float32bits(want[i].Score) {
			t.Fatalf("%s: hit %d is %s %v, want %s %v", what, i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
		}
	}
}

// TestSearchRefusesAndFallsBack checks the requests Search refuses, and
// that a query with negative weights, which its bounds do not hold for,
// gets the exhaustive hits.
func TestSearchRefusesAndFallsBack(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	corpus := analyse(randomCorpus(rng, 60))
	set, _ := segmentSet(t, corpus, []int{30}, 0.8)
	for name, c := range map[string]struct {
		q vector.Sparse
		k int
	}{
		"a top k of zero":        {vector.Sparse{Indices: []uint32{0}, Values: []float32{1}}, 0},
		"ids out of order":       {vector.Sparse{Indices: []uint32{2, 1}, Values: []float32{1, 1}}, 5},
		"an id beyond the vocab": {vector.Sparse{Indices: []uint32{1 << 30}, Values: []float32{1}}, 5},
		"a weight that is NaN":   {vector.Sparse{Indices: []uint32{0}, Values: []float32{float32(math.NaN())}}, 5},
		"more ids than weights":  {vector.Sparse{Indices: []uint32{0, 1}, Values: []float32{1}}, 5},
	} {
		if _, err := set.Search(ctx, &c.q, c.k); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	vocab := set.Lexical().VocabularySize()
	for range 50 {
		var q vector.Sparse
		for id := range uint32(vocab) {
			if rng.IntN(20) == 0 {
				q.Indices, q.Values = append(q.Indices, id), append(q.Values, float32(rng.NormFloat64()))
			}
		}
		want, err := set.SearchExhaustive(ctx, &q, 7)
		if err != nil {
			t.Fatal(err)
		}
		got, err := set.Search(ctx, &q, 7)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("weights %v: %v, want %v", q.Values, got, want)
		}
	}
}

// TestSearchesRunConcurrently checks that searches of one set from many
// goroutines at once, which share the pool of their memory, each return
// what the same search alone returns.
func TestSearchesRunConcurrently(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 13))
	corpus := randomCorpus(rng, 300)
	analysed := analyse(corpus)
	set, _ := segmentSet(t, analysed, []int{60, 150, 151, 240}, 0.8)
	var queries []*vector.Sparse
	var alone [][]segment.Hit
	for range 40 {
		q, err := set.Lexical().EmbedQuery(ctx, randomQuery(rng, corpus))
		if err != nil {
			t.Fatal(err)
		}
		hits, err := set.Search(ctx, q.Sparse, 5)
		if err != nil {
			t.Fatal(err)
		}
		queries, alone = append(queries, q.Sparse), append(alone, hits)
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for round := range 20 {
				i := (g*7 + round) % len(queries)
				hits, err := set.Search(ctx, queries[i], 5)
				if err == nil && !slices.Equal(hits, alone[i]) {
					err = fmt.Errorf("query %d: %v at once, %v alone", i, hits, alone[i])
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
