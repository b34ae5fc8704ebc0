package bm25

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parentrag/parentrag/internal/index/vector"
)

var bm25Corpus = []string{
	"The quick brown fox jumps over the lazy dog.",
	"A quick brown dog outpaces a quick fox; foxes are quick, dogs are loyal.",
	"Parent documents hold children; each child chunk is embedded for retrieval.",
	"Retrieval of parent documents by child chunks: embed, index, retrieve, rerank.",
	"Kubernetes operators reconcile custom resources in a control loop.",
	"Dogs.",
	"The operator indexes documents and answers queries about the documents, the chunks and the parents of the chunks, again and again and again.",
	"",
}

var bm25Queries = []string{
	"quick fox",
	"quick quick dog",
	"parent child retrieval",
	"documents documents documents",
	"kubernetes operator reconcile loop",
	"unknownterm zebra",
	"the and of",
	"",
	"fox unknownterm dogs",
}

// referenceBM25 scores query against every corpus text directly from the
// BM25 definition, in float64, without vocabulary ids or vectors.
func referenceBM25(corpus []string, query string, k1, b float64) []float64 {
	tfs := make([]map[string]int, len(corpus))
	lens := make([]float64, len(corpus))
	df := map[string]int{}
	total := 0.0
	for i, text := range corpus {
		tfs[i] = map[string]int{}
		for _, t := range Analyze(text) {
			if tfs[i][t] == 0 {
				df[t]++
			}
			tfs[i][t]++
		}
		lens[i] = float64(len(Analyze(text)))
		total += lens[i]
	}
	n := float64(len(corpus))
	avgdl := total / n
	scores := make([]float64, len(corpus))
	for _, q := range Analyze(query) {
		if df[q] == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(df[q])+0.5)/(float64(df[q])+0.5))
		for i := range corpus {
			tf := float64(tfs[i][q])
			scores[i] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*lens[i]/avgdl))
		}
	}
	return scores
}

func fitLexical(t testing.TB, k1, b float64, corpus []string) *Lexical {
	t.Helper()
	l, err := NewLexical(k1, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Fit(corpus); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLexicalDotEqualsReferenceBM25(t *testing.T) {
	params := [][2]float64{{DefaultK1, DefaultB}, {1.2, 0.75}, {0, 0}, {2, 1}, {0.5, 0}}
	for _, p := range params {
		l := fitLexical(t, p[0], p[1], bm25Corpus)
		docs, err := l.EmbedDocuments(context.Background(), bm25Corpus)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range bm25Queries {
			qv, err := l.EmbedQuery(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			want := referenceBM25(bm25Corpus, q, p[0], p[1])
			for i, d := range docs {
				got := float64(qv.Sparse.Dot(*d.Sparse))
				if math.Abs(got-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
					t.Errorf("k1=%v b=%v query %q doc %d: dot %v, reference BM25 %v", p[0], p[1], q, i, got, want[i])
				}
			}
		}
	}
}

// TestLexicalDotEqualsReferenceOnSyntheticCorpus checks exactness on a larger
// corpus with a realistic vocabulary, large enough to embed in parallel.
func TestLexicalDotEqualsReferenceOnSyntheticCorpus(t *testing.T) {
	corpus := syntheticTexts(3*embedChunk+7, 40, 7)
	queries := syntheticTexts(20, 6, 8)
	l := fitLexical(t, DefaultK1, DefaultB, corpus)
	docs, err := l.EmbedDocuments(context.Background(), corpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		qv, _ := l.EmbedQuery(context.Background(), q)
		want := referenceBM25(corpus, q, DefaultK1, DefaultB)
		for i, d := range docs {
			got := float64(qv.Sparse.Dot(*d.Sparse))
			if math.Abs(got-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("query %q doc %d: dot %v, reference %v", q, i, got, want[i])
			}
		}
	}
}

func checkSparse(t *testing.T, v vector.Vector, vocab int) {
	t.Helper()
	if v.Sparse == nil || v.Dense != nil {
		t.Fatalf("want sparse-only vector, got %+v", v)
	}
	s := v.Sparse
	if len(s.Indices) != len(s.Values) {
		t.Fatalf("%d indices, %d values", len(s.Indices), len(s.Values))
	}
	for i, id := range s.Indices {
		if i > 0 && id <= s.Indices[i-1] {
			t.Fatalf("indices not strictly increasing: %v", s.Indices)
		}
		if int(id) >= vocab {
			t.Fatalf("index %d outside vocabulary of %d", id, vocab)
		}
		if !(s.Values[i] > 0) {
			t.Fatalf("non-positive weight %v", s.Values[i])
		}
	}
}

func TestLexicalVectorsAreWellFormed(t *testing.T) {
	l := fitLexical(t, DefaultK1, DefaultB, bm25Corpus)
	docs, err := l.EmbedDocuments(context.Background(), bm25Corpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(bm25Corpus) {
		t.Fatalf("%d vectors for %d texts", len(docs), len(bm25Corpus))
	}
	for _, d := range docs {
		checkSparse(t, d, l.VocabularySize())
	}
	for _, q := range bm25Queries {
		v, _ := l.EmbedQuery(context.Background(), q)
		checkSparse(t, v, l.VocabularySize())
	}
	if empty := docs[len(docs)-1].Sparse; empty.Indices == nil || len(empty.Indices) != 0 {
		t.Errorf("empty text: want non-nil empty indices, got %#v", empty)
	}
}

func TestLexicalStatistics(t *testing.T) {
	l := fitLexical(t, 1.2, 0.75, []string{"cats cats dogs", "dogs birds", "fish"})
	if k1, b := l.Params(); k1 != 1.2 || b != 0.75 {
		t.Errorf("Params() = %v, %v", k1, b)
	}
	if l.DocCount() != 3 || l.VocabularySize() != 4 || l.AvgDocLength() != 2 {
		t.Errorf("DocCount %d VocabularySize %d AvgDocLength %v, want 3 4 2",
			l.DocCount(), l.VocabularySize(), l.AvgDocLength())
	}
	// ids are ranks in sorted term order: bird, cat, dog, fish.
	for want, term := range []string{"bird", "cat", "dog", "fish"} {
		id, _, ok := l.DocFreq(term)
		if !ok || id != uint32(want) {
			t.Errorf("DocFreq(%q) id = %d, %v; want %d", term, id, ok, want)
		}
	}
	if _, df, _ := l.DocFreq("dog"); df != 2 {
		t.Errorf("df(dog) = %d, want 2", df)
	}
	if _, _, ok := l.DocFreq("zebra"); ok {
		t.Error("DocFreq(zebra) found")
	}
}

func TestLexicalFitIsDeterministicAndParallelSafe(t *testing.T) {
	corpus := syntheticTexts(5*fitChunk+3, 25, 3)
	a := fitLexical(t, DefaultK1, DefaultB, corpus)
	rev := slices.Clone(corpus)
	slices.Reverse(rev)
	b := fitLexical(t, DefaultK1, DefaultB, rev)
	ma, _ := a.MarshalStats()
	mb, _ := b.MarshalStats()
	if !slices.Equal(ma, mb) {
		t.Fatal("fitting the same corpus in another order changed the statistics")
	}
	// Document frequencies match a sequential count.
	df := map[string]int{}
	for _, text := range corpus {
		seen := map[string]bool{}
		for _, tok := range Analyze(text) {
			if !seen[tok] {
				seen[tok] = true
				df[tok]++
			}
		}
	}
	if a.VocabularySize() != len(df) {
		t.Fatalf("vocabulary %d, want %d", a.VocabularySize(), len(df))
	}
	for term, want := range df {
		if _, got, _ := a.DocFreq(term); got != want {
			t.Fatalf("df(%q) = %d, want %d", term, got, want)
		}
	}
}

func TestLexicalParallelEmbedMatchesSequential(t *testing.T) {
	corpus := syntheticTexts(4*embedChunk+5, 30, 5)
	l := fitLexical(t, DefaultK1, DefaultB, corpus)
	all, err := l.EmbedDocuments(context.Background(), corpus)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range corpus {
		one, _ := l.EmbedDocuments(context.Background(), []string{text})
		if !slices.Equal(one[0].Sparse.Indices, all[i].Sparse.Indices) ||
			!slices.Equal(one[0].Sparse.Values, all[i].Sparse.Values) {
			t.Fatalf("text %d embeds differently alone and in a batch", i)
		}
	}
}

func TestLexicalUnknownDocumentTermsDroppedButCounted(t *testing.T) {
	l := fitLexical(t, 1, 1, []string{"apple banana", "apple cherry"})
	vs, _ := l.EmbedDocuments(context.Background(), []string{"apple", "apple zebra yak"})
	short, long := vs[0].Sparse, vs[1].Sparse
	if len(long.Indices) != 1 {
		t.Fatalf("unknown terms kept: %v", long.Indices)
	}
	// tf=1, k1=1, b=1, avgdl=2: dl=1 -> 2/(1+0.5); dl=3 -> 2/(1+1.5).
	if want := float32(2 / 1.5); short.Values[0] != want {
		t.Errorf("short doc weight %v, want %v", short.Values[0], want)
	}
	if want := float32(2 / 2.5); long.Values[0] != want {
		t.Errorf("long doc weight %v, want %v", long.Values[0], want)
	}
}

func TestLexicalQueryRepeatsMultiplyIDF(t *testing.T) {
	l := fitLexical(t, DefaultK1, DefaultB, bm25Corpus)
	one, _ := l.EmbedQuery(context.Background(), "fox")
	three, _ := l.EmbedQuery(context.Background(), "fox Fox foxes")
	if len(three.Sparse.Values) != 1 || math.Abs(float64(three.Sparse.Values[0]-3*one.Sparse.Values[0])) > 1e-6 {
		t.Fatalf("repeated query term: %v vs 3×%v", three.Sparse.Values, one.Sparse.Values)
	}
}

func TestLexicalUnfitted(t *testing.T) {
	l, _ := NewLexical(DefaultK1, DefaultB)
	if _, err := l.EmbedDocuments(context.Background(), []string{"x"}); !errors.Is(err, ErrNotFitted) {
		t.Errorf("EmbedDocuments: %v, want ErrNotFitted", err)
	}
	if _, err := l.EmbedQuery(context.Background(), "x"); !errors.Is(err, ErrNotFitted) {
		t.Errorf("EmbedQuery: %v, want ErrNotFitted", err)
	}
	if _, err := l.MarshalStats(); !errors.Is(err, ErrNotFitted) {
		t.Errorf("MarshalStats: %v, want ErrNotFitted", err)
	}
	if l.Fitted() || l.DocCount() != 0 || l.VocabularySize() != 0 || l.AvgDocLength() != 0 {
		t.Error("unfitted embedder reports statistics")
	}
}

func TestLexicalEmptyCorpus(t *testing.T) {
	l := fitLexical(t, DefaultK1, DefaultB, nil)
	vs, err := l.EmbedDocuments(context.Background(), []string{"anything"})
	if err != nil || len(vs[0].Sparse.Indices) != 0 {
		t.Fatalf("got %v, %v", vs, err)
	}
	q, err := l.EmbedQuery(context.Background(), "anything")
	if err != nil || len(q.Sparse.Indices) != 0 {
		t.Fatalf("got %v, %v", q, err)
	}
}

func TestNewLexicalRejectsBadParams(t *testing.T) {
	for _, p := range [][2]float64{{-1, 0.5}, {math.NaN(), 0.5}, {math.Inf(1), 0.5}, {1, -0.1}, {1, 1.1}, {1, math.NaN()}} {
		if _, err := NewLexical(p[0], p[1]); err == nil {
			t.Errorf("NewLexical(%v, %v) accepted", p[0], p[1])
		}
	}
}

func TestLexicalContextCancelled(t *testing.T) {
	l := fitLexical(t, DefaultK1, DefaultB, bm25Corpus)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.EmbedDocuments(ctx, bm25Corpus); !errors.Is(err, context.Canceled) {
		t.Errorf("EmbedDocuments: %v, want context.Canceled", err)
	}
	if _, err := l.EmbedQuery(ctx, "fox"); !errors.Is(err, context.Canceled) {
		t.Errorf("EmbedQuery: %v, want context.Canceled", err)
	}
}

func TestLexicalRefitWhileEmbedding(t *testing.T) {
	l := fitLexical(t, DefaultK1, DefaultB, bm25Corpus)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 20 {
			_ = l.Fit(bm25Corpus[:4])
			_ = l.Fit(bm25Corpus)
		}
	})
	wg.Go(func() {
		for range 200 {
			vs, err := l.EmbedDocuments(context.Background(), bm25Corpus)
			if err != nil {
				t.Error(err)
				return
			}
			for _, v := range vs {
				if !slices.IsSorted(v.Sparse.Indices) {
					t.Error("unsorted indices")
				}
			}
			_, _ = l.EmbedQuery(context.Background(), strings.Join(bm25Queries, " "))
		}
	})
	wg.Wait()
}
