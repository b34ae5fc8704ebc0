package embed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// realVector is a deterministic embedding of text whose values use every
// bit of a float32, so a lossy cache could not pass for an exact one.
func realVector(text string, dims int) []float32 {
	seed := sha256.Sum256([]byte(text))
	r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:]), binary.LittleEndian.Uint64(seed[8:])))
	v := make([]float32, dims)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// answerReal answers a fake embeddings request with realVector (16
// dimensions unless the request asks for others).
func answerReal(c fakeCall, w http.ResponseWriter, _ *http.Request) {
	data := make([]fakeItem, len(c.req.Input))
	for i, text := range c.req.Input {
		data[i] = fakeItem{"embedding", i, realVector(text, cmpOr(c.req.Dimensions, 16))}
	}
	writeItems(w, c.req, data)
}

// sentSince returns every text the fake API received from request number
// from on, in arrival order.
func sentSince(f *fakeAPI, from int) []string {
	var out []string
	for _, c := range f.Calls()[from:] {
		out = append(out, c.req.Input...)
	}
	return out
}

// embedOK embeds texts and fails the test on error.
func embedOK(t testing.TB, e Embedder, texts []string) []vector.Vector {
	t.Helper()
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs
}

// sameBits fails unless got and want are dense-only and bit-identical.
func sameBits(t *testing.T, got, want []vector.Vector) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d vectors, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i].Dense, want[i].Dense
		if got[i].Sparse != nil || len(g) != len(w) {
			t.Fatalf("vector %d: sparse %v, %d values, want dense with %d", i, got[i].Sparse != nil, len(g), len(w))
		}
		for j := range g {
			if math.Float32bits(g[j]) != math.Float32bits(w[j]) {
				t.Fatalf("vector %d value %d: %x, want %x", i, j, math.Float32bits(g[j]), math.Float32bits(w[j]))
			}
		}
	}
}

// openCache opens a FileCache in dir, closing it when the test ends.
func openCache(t testing.TB, dir string) *FileCache {
	t.Helper()
	c, err := OpenFileCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func wantStats(t *testing.T, c *Cached, hits, misses int64) {
	t.Helper()
	if s := c.Stats(); s.Hits != hits || s.Misses != misses || s.StoreErrors != 0 {
		t.Fatalf("stats %+v, want %d hits, %d misses, no store errors", s, hits, misses)
	}
}

// TestCachedRolloutEmbedsOnlyChangedChildren is the chunk-size rollout: a
// second revision that keeps 70% of the children, through a new Cached over
// the same cache reopened from disk, sends the API exactly the 30% it has
// not seen, and serves vectors bit-identical to an uncached run.
func TestCachedRolloutEmbedsOnlyChangedChildren(t *testing.T) {
	dir := t.TempDir()
	f := newFakeAPI(t, answerReal)
	client := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.BatchSize = 16; o.Dimensions = 32 })
	rev1 := make([]string, 100)
	for i := range rev1 {
		rev1[i] = fmt.Sprintf("revision 1 child %d: chunk text", i)
	}
	store := openCache(t, dir)
	first := NewCached(client, store, client.CacheKey())
	embedOK(t, first, rev1)
	if sent := sentSince(f, 0); !slices.Equal(sent, rev1) {
		t.Fatalf("first revision sent %d texts, want all %d", len(sent), len(rev1))
	}
	wantStats(t, first, 0, 100)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	// Revision 2: every tenth child's first three slots hold new text, the
	// other 70 are children of revision 1, in another order.
	var rev2, changed []string
	for i := range 100 {
		if i%10 < 3 {
			text := fmt.Sprintf("revision 2 new child %d", i)
			rev2, changed = append(rev2, text), append(changed, text)
		} else {
			rev2 = append(rev2, rev1[(i*7)%100])
		}
	}
	before := len(f.Calls())
	second := NewCached(client, openCache(t, dir), client.CacheKey())
	got := embedOK(t, second, rev2)
	if sent := sentSince(f, before); !slices.Equal(sent, changed) {
		t.Fatalf("second revision sent %q, want exactly the %d changed texts %q", sent, len(changed), changed)
	}
	wantStats(t, second, 70, 30)
	if r := second.Stats().HitRate(); r != 0.7 {
		t.Fatalf("hit rate %v, want 0.7", r)
	}
	uncached, err := client.EmbedDocuments(context.Background(), rev2)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, got, uncached)
}

// recordingEmbedder returns realVector for every text and records the
// texts of each EmbedDocuments call.
type recordingEmbedder struct {
	mu    sync.Mutex
	calls [][]string
	err   error
	fits  [][]string
}

func (r *recordingEmbedder) EmbedDocuments(_ context.Context, texts []string) ([]vector.Vector, error) {
	r.mu.Lock()
	r.calls = append(r.calls, slices.Clone(texts))
	r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	out := make([]vector.Vector, len(texts))
	for i, t := range texts {
		out[i] = vector.Vector{Dense: realVector(t, 8)}
	}
	return out, nil
}

func (r *recordingEmbedder) EmbedQuery(_ context.Context, text string) (vector.Vector, error) {
	return vector.Vector{Dense: realVector("query: "+text, 8)}, nil
}

// fittingEmbedder is a recordingEmbedder that is also a Fitter.
type fittingEmbedder struct{ recordingEmbedder }

func (f *fittingEmbedder) Fit(texts []string) error {
	f.fits = append(f.fits, texts)
	return nil
}

func wantVectorsOf(t *testing.T, got []vector.Vector, texts []string) {
	t.Helper()
	want := make([]vector.Vector, len(texts))
	for i, text := range texts {
		want[i] = vector.Vector{Dense: realVector(text, 8)}
	}
	sameBits(t, got, want)
}

func TestCachedEmbedsRepeatedTextsOnce(t *testing.T) {
	inner := &recordingEmbedder{}
	c := NewCached(inner, openCache(t, t.TempDir()), CacheKey{Model: "m"})
	in := []string{"a", "b", "a", "c", "b", "a"}
	got := embedOK(t, c, in)
	wantVectorsOf(t, got, in)
	if !slices.EqualFunc(inner.calls, [][]string{{"a", "b", "c"}}, slices.Equal) {
		t.Fatalf("inner calls %q, want one call with a, b, c", inner.calls)
	}
	wantStats(t, c, 3, 3)
	got[0].Dense[0] = 42
	if got[2].Dense[0] == 42 || got[5].Dense[0] == 42 {
		t.Fatal("repeated texts share one backing array")
	}

	in = []string{"c", "d", "c", "a"}
	wantVectorsOf(t, embedOK(t, c, in), in)
	if len(inner.calls) != 2 || !slices.Equal(inner.calls[1], []string{"d"}) {
		t.Fatalf("inner calls %q, want a second call with d only", inner.calls)
	}
	wantStats(t, c, 6, 4)
}

func TestCachedMissesKeepInputOrderInOneCall(t *testing.T) {
	inner := &recordingEmbedder{}
	store := openCache(t, t.TempDir())
	c := NewCached(inner, store, CacheKey{Model: "m"})
	embedOK(t, c, []string{"b", "d"})
	in := []string{"e", "b", "a", "d", "c", "e"}
	wantVectorsOf(t, embedOK(t, c, in), in)
	if len(inner.calls) != 2 || !slices.Equal(inner.calls[1], []string{"e", "a", "c"}) {
		t.Fatalf("inner calls %q, want e, a, c in one call", inner.calls)
	}
	if store.Len() != 5 {
		t.Fatalf("store holds %d vectors, want 5", store.Len())
	}
	if got := embedOK(t, c, nil); len(got) != 0 || len(inner.calls) != 2 {
		t.Fatalf("empty input: %d vectors, %d inner calls", len(got), len(inner.calls))
	}
}

// TestCachedKeySeparation: the same text under another model, dimensions
// or document prefix is a miss, while the endpoint does not matter.
func TestCachedKeySeparation(t *testing.T) {
	store := openCache(t, t.TempDir())
	in := []string{"shared text one", "shared text two"}
	base := CacheKey{Model: "m", Dimensions: 8}
	for _, key := range []CacheKey{
		base,
		{Model: "m2", Dimensions: 8},
		{Model: "m", Dimensions: 16},
		{Model: "m", Dimensions: 8, DocumentPrefix: "passage: "},
	} {
		c := NewCached(&recordingEmbedder{}, store, key)
		embedOK(t, c, in)
		wantStats(t, c, 0, 2)
	}
	again := NewCached(&recordingEmbedder{}, store, base)
	embedOK(t, again, in)
	wantStats(t, again, 2, 0)

	f1, f2 := newFakeAPI(t, answerReal), newFakeAPI(t, answerReal)
	c1, c2 := newTestClient(t, f1.URL, nil), newTestClient(t, f2.URL+"/v1/", nil)
	if c1.CacheKey() != c2.CacheKey() {
		t.Fatalf("keys differ by endpoint: %+v, %+v", c1.CacheKey(), c2.CacheKey())
	}
	shared := openCache(t, t.TempDir())
	embedOK(t, NewCached(c1, shared, c1.CacheKey()), in)
	embedOK(t, NewCached(c2, shared, c2.CacheKey()), in)
	if len(f2.Calls()) != 0 {
		t.Fatalf("the same model behind another endpoint was asked %d times", len(f2.Calls()))
	}
}

func TestCacheKeySum(t *testing.T) {
	// The store key is persisted: a change of its layout must be deliberate
	// (and bump cacheKeyTag).
	const golden = "15206aa8801f4f5152952e54ab2b35c6b110114e25d1d24b4e30adc1cc6830fb"
	got := CacheKey{Model: "text-embedding-3-small", Dimensions: 1536}.Sum("hello")
	if hex.EncodeToString(got[:]) != golden {
		t.Errorf("Sum = %x, want %s", got, golden)
	}
	seen := map[[32]byte]string{}
	for _, c := range []struct {
		key  CacheKey
		text string
	}{
		{CacheKey{Model: "ab"}, "c"},
		{CacheKey{Model: "a"}, "bc"},
		{CacheKey{Model: "a", DocumentPrefix: "b"}, "c"},
		{CacheKey{Model: "a", Dimensions: 1}, "c"},
		{CacheKey{Model: "a", Dimensions: -1}, "c"},
		{CacheKey{Model: "a"}, "c"},
	} {
		s := c.key.Sum(c.text)
		name := fmt.Sprintf("%+v %q", c.key, c.text)
		if other, dup := seen[s]; dup {
			t.Errorf("%s and %s share a key", name, other)
		}
		seen[s] = name
	}
}

func TestCachedForwardsFit(t *testing.T) {
	fitter := &fittingEmbedder{}
	if err := NewCached(fitter, openCache(t, t.TempDir()), CacheKey{}).Fit([]string{"x"}); err != nil {
		t.Fatal(err)
	}
	if len(fitter.fits) != 1 || fitter.fits[0][0] != "x" {
		t.Fatalf("fits %q, want one with x", fitter.fits)
	}
	if err := NewCached(&recordingEmbedder{}, openCache(t, t.TempDir()), CacheKey{}).Fit([]string{"x"}); err != nil {
		t.Fatalf("Fit of a non-fitter: %v", err)
	}
}

func TestCachedEmbedQueryPassesThrough(t *testing.T) {
	inner, store := &recordingEmbedder{}, openCache(t, t.TempDir())
	c := NewCached(inner, store, CacheKey{})
	v, err := c.EmbedQuery(context.Background(), "q")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := inner.EmbedQuery(context.Background(), "q")
	sameBits(t, []vector.Vector{v}, []vector.Vector{want})
	if store.Len() != 0 || c.Stats() != (CacheStats{}) {
		t.Fatalf("a query touched the cache: %d stored, stats %+v", store.Len(), c.Stats())
	}
}

func TestCachedRefusesSparseInner(t *testing.T) {
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	if err := lex.Fit([]string{"alpha beta", "beta gamma"}); err != nil {
		t.Fatal(err)
	}
	store := openCache(t, t.TempDir())
	_, err = NewCached(lex, store, CacheKey{Model: "bm25"}).EmbedDocuments(context.Background(), []string{"alpha"})
	if err == nil || !strings.Contains(err.Error(), "only dense vectors are cached") {
		t.Fatalf("err = %v, want a refusal of sparse vectors", err)
	}
	if store.Len() != 0 {
		t.Fatal("a sparse vector was stored")
	}
}

func TestCachedInnerErrorStoresNothing(t *testing.T) {
	boom := errors.New("boom")
	inner, store := &recordingEmbedder{err: boom}, openCache(t, t.TempDir())
	c := NewCached(inner, store, CacheKey{})
	if _, err := c.EmbedDocuments(context.Background(), []string{"a"}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if store.Len() != 0 || c.Stats() != (CacheStats{}) {
		t.Fatalf("failed call stored %d vectors, stats %+v", store.Len(), c.Stats())
	}
}

// brokenStore fails every call.
type brokenStore struct{}

func (brokenStore) Get([][32]byte) ([]vector.Vector, []bool, error) {
	return nil, nil, errors.New("disk on fire")
}
func (brokenStore) Put([][32]byte, []vector.Vector) error { return errors.New("disk full") }
func (brokenStore) Close() error                          { return nil }

func TestCachedSurvivesStoreErrors(t *testing.T) {
	inner := &recordingEmbedder{}
	c := NewCached(inner, brokenStore{}, CacheKey{})
	var seen []string
	c.OnStoreError = func(err error) { seen = append(seen, err.Error()) }
	in := []string{"a", "b", "a"}
	wantVectorsOf(t, embedOK(t, c, in), in)
	if s := c.Stats(); s.StoreErrors != 2 || s.Misses != 2 || s.Hits != 1 {
		t.Fatalf("stats %+v, want 2 store errors, 2 misses, 1 hit", s)
	}
	if !slices.Equal(seen, []string{"disk on fire", "disk full"}) {
		t.Fatalf("OnStoreError got %q", seen)
	}
}

// TestCachedConcurrent runs overlapping EmbedDocuments calls over one file
// cache (run with -race): every result is right, every text ends up stored
// once, and afterwards nothing is sent again.
func TestCachedConcurrent(t *testing.T) {
	f := newFakeAPI(t, answerReal)
	client := newTestClient(t, f.URL, func(o *OpenAIOptions) { o.BatchSize = 8 })
	store := openCache(t, t.TempDir())
	c := NewCached(client, store, client.CacheKey())
	pool := texts(300)
	window := func(g, round int) []string {
		lo := (g*37 + round*53) % 200
		return pool[lo : lo+100]
	}
	covered := map[string]bool{}
	for g := range 8 {
		for round := range 4 {
			for _, text := range window(g, round) {
				covered[text] = true
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*4)
	for g := range 8 {
		wg.Go(func() {
			for round := range 4 {
				in := window(g, round)
				vecs, err := c.EmbedDocuments(context.Background(), in)
				if err == nil {
					err = checkReal(vecs, in, 16)
				}
				errs <- err
				_ = c.Stats().HitRate()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if s := c.Stats(); s.Hits+s.Misses != 8*4*100 || s.Hits == 0 {
		t.Fatalf("stats %+v, want %d texts with some hits", s, 8*4*100)
	}
	if store.Len() != len(covered) {
		t.Fatalf("%d stored, want each of the %d texts once", store.Len(), len(covered))
	}
	var uncovered []string
	for _, text := range pool {
		if !covered[text] {
			uncovered = append(uncovered, text)
		}
	}
	before := len(f.Calls())
	embedOK(t, c, pool)
	if sent := sentSince(f, before); !slices.Equal(sent, uncovered) {
		t.Fatalf("afterwards sent %q, want only the %d never embedded", sent, len(uncovered))
	}
}

// checkReal reports whether vecs are realVector of texts.
func checkReal(vecs []vector.Vector, texts []string, dims int) error {
	for i, v := range vecs {
		if !slices.Equal(v.Dense, realVector(texts[i], dims)) {
			return fmt.Errorf("vector of %q is wrong", texts[i])
		}
	}
	return nil
}
