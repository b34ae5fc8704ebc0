package embedded

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parentrag/parentrag/internal/index"
	"github.com/parentrag/parentrag/internal/index/maxima"
	"github.com/parentrag/parentrag/internal/index/vector"
)

// pruneCorpus is a random store for comparing pruned with exhaustive
// search: skewed term frequencies (long lists spanning many blocks beside
// short ones), a weight style, duplicated vectors (equal scores, so the id
// tie-break decides), replacements and deletes (tombstones).
type pruneCorpus struct {
	e     *Store
	ids   []string
	vocab int
	style int
}

// Weight styles: coarse integers (many equal scores), positive floats,
// floats of either sign, magnitudes whose products overflow float32 (which
// pruning must refuse to bound), and positive floats that are eight times
// heavier for a term in the runs of records where it is "topical", so that
// block maxima differ from run to run and whole windows get skipped.
const (
	styleCoarse = iota
	stylePositive
	styleSigned
	styleHuge
	styleRegional
	styles
)

func pruneWeight(r *rand.Rand, style int) float32 {
	switch style {
	case styleCoarse:
		return float32(1 + r.IntN(3))
	case stylePositive:
		return r.Float32()*3 + 0x1p-20
	case styleSigned:
		return (r.Float32() - 0.3) * 4
	case styleRegional:
		return r.Float32() + 0x1p-20
	}
	return float32(math.Pow(10, float64(r.IntN(40)-5)))
}

func prunedSparse(r *rand.Rand, z *rand.Zipf, terms, style int) *vector.Sparse {
	seen := map[uint32]bool{}
	for range terms {
		seen[uint32(z.Uint64())] = true
	}
	s := &vector.Sparse{}
	for t := range seen {
		s.Indices = append(s.Indices, t)
	}
	slices.Sort(s.Indices)
	for range s.Indices {
		s.Values = append(s.Values, pruneWeight(r, style))
	}
	return s
}

// newPruneCorpus returns a corpus of random size and weight style.
func newPruneCorpus(t *testing.T, r *rand.Rand) *pruneCorpus {
	t.Helper()
	// The largest span several windows of slots (windowSize), so that
	// window skipping and dense-term gathering are exercised.
	sizes := []int{0, 1 + r.IntN(20), 100 + r.IntN(400), 1000 + r.IntN(3000), 3*windowSize + r.IntN(4*windowSize)}
	return newPruneCorpusOf(t, r, r.IntN(styles), sizes[r.IntN(len(sizes))])
}

// newPruneCorpusOf returns a corpus of about n records of the given style.
func newPruneCorpusOf(t *testing.T, r *rand.Rand, style, n int) *pruneCorpus {
	t.Helper()
	c := &pruneCorpus{e: mustStore(t, Options{}), vocab: 20 + r.IntN(300), style: style}
	z := rand.NewZipf(r, 1.1, 1+r.Float64()*5, uint64(c.vocab-1))
	var prev *vector.Sparse
	recs := make([]index.Record, n)
	for i := range recs {
		v := prunedSparse(r, z, 1+r.IntN(25), c.style)
		if c.style == styleRegional {
			topical(v, i)
		}
		if prev != nil && r.IntN(6) == 0 {
			v = prev // an exact duplicate: same score, id decides
		}
		prev = v
		id := fmt.Sprintf("r%05d", r.IntN(n+n/8+1)) // some ids repeat: replacements
		recs[i] = index.Record{ID: id, ParentID: "p" + id[len(id)-2:], DocID: "d", Vector: vector.Vector{Sparse: v}}
		c.ids = append(c.ids, id)
	}
	for len(recs) > 0 {
		batch := min(len(recs), 1+r.IntN(700))
		mustUpsert(t, c.e, recs[:batch]...)
		recs = recs[batch:]
	}
	var del []string
	for range r.IntN(n/5 + 1) {
		del = append(del, c.ids[r.IntN(len(c.ids))])
	}
	if err := c.e.Delete(context.Background(), del); err != nil {
		t.Fatal(err)
	}
	return c
}

// topical makes the weights of record i's topical terms eight times
// heavier: a term is topical in one run of 2*windowSize records out of five.
func topical(v *vector.Sparse, i int) {
	for j, t := range v.Indices {
		if (i/(2*windowSize)+int(t))%5 == 0 {
			v.Values[j] *= 8
		}
	}
}

// query draws a query over the corpus vocabulary plus terms it lacks, with
// a zero weight now and then.
func (c *pruneCorpus) query(r *rand.Rand) *vector.Sparse {
	z := rand.NewZipf(r, 1.1, 2, uint64(c.vocab+20))
	q := prunedSparse(r, z, 1+r.IntN(12), c.style)
	if r.IntN(8) == 0 {
		q.Values[r.IntN(len(q.Values))] = 0
	}
	return q
}

// prunePaths are the pruned search paths every comparison runs: the
// store's own choice, windowed MaxScore alone and grouped search alone.
var prunePaths = []int32{anyPath, windowedOnly, groupedOnly}

// searchBoth runs req exhaustively and then pruned by every path
// (filtered when keep is set) and fails unless ids, scores bit for bit and
// order agree.
func searchBoth(t *testing.T, e *Store, req index.SearchRequest, keep func(index.Hit) bool) []index.Hit {
	t.Helper()
	run := func(exhaustive bool) []index.Hit {
		e.SetExhaustiveSparse(exhaustive)
		defer e.SetExhaustiveSparse(false)
		var hits []index.Hit
		var err error
		if keep != nil {
			hits, err = e.SearchFiltered(context.Background(), req, keep)
		} else {
			hits, err = e.Search(context.Background(), req)
		}
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	want := run(true)
	var got []index.Hit
	for _, path := range prunePaths {
		e.prunePath.Store(path)
		got = run(false)
		e.prunePath.Store(anyPath)
		sameAsExhaustive(t, fmt.Sprintf("path %d", path), got, want, req)
	}
	return got
}

// sameAsExhaustive fails unless got has want's ids and bitwise scores in
// want's order.
func sameAsExhaustive(t *testing.T, label string, got, want []index.Hit, req index.SearchRequest) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: pruned search returned %d hits, exhaustive %d (k %d, query %v)", label, len(got), len(want), req.TopK, req.Vector.Sparse)
	}
	for i := range want {
		if got[i].ID != want[i].ID || math.Float32bits(got[i].Score) != math.Float32bits(want[i].Score) {
			t.Fatalf("%s: hit %d: pruned %s %v (bits %08x), exhaustive %s %v (bits %08x); k %d, query %v", label, i,
				got[i].ID, got[i].Score, math.Float32bits(got[i].Score),
				want[i].ID, want[i].Score, math.Float32bits(want[i].Score), req.TopK, req.Vector.Sparse)
		}
	}
}

// TestPrunedSearchEqualsExhaustive compares pruned with exhaustive search
// over 8 random corpora and their queries: every k from 1 to past the
// number of matches, with and without a filter, before and after a save
// and load.
func TestPrunedSearchEqualsExhaustive(t *testing.T) { comparePrunedSearch(t, 8) }

// TestPrunedSearchEqualsExhaustiveOn40Corpora is the comparison over 40
// corpora (the first 8 of them the short test's), too long for -short.
func TestPrunedSearchEqualsExhaustiveOn40Corpora(t *testing.T) {
	if testing.Short() {
		t.Skip("compares about 5,000 searches; skipped with -short")
	}
	comparePrunedSearch(t, 40)
}

// comparePrunedSearch compares pruned with exhaustive search over corpora
// random corpora.
func comparePrunedSearch(t *testing.T, corpora int) {
	r := rand.New(rand.NewPCG(7, 11))
	compared := 0
	for corpus := range corpora {
		c := newPruneCorpus(t, r)
		if corpus%5 == 4 {
			c.e = saveLoad(t, c.e)
		}
		keepOdd := func(h index.Hit) bool { return h.ID[len(h.ID)-1]%3 != 0 }
		for range 12 {
			q := c.query(r)
			all := searchBoth(t, c.e, index.SearchRequest{Vector: vector.Vector{Sparse: q}, TopK: c.e.Stats().Records + 1}, nil)
			for _, k := range topKs(r, len(all)) {
				req := index.SearchRequest{Vector: vector.Vector{Sparse: q}, TopK: k}
				searchBoth(t, c.e, req, nil)
				filtered := searchBoth(t, c.e, req, keepOdd)
				sameHits(t, fmt.Sprintf("filtered k=%d", k), filtered, firstKept(all, keepOdd, k))
				compared += 2
			}
		}
	}
	t.Logf("%d pruned searches matched the exhaustive scan", compared)
}

// topKs returns the ks to try for a query with matches hits: 1, a few in
// between, matches itself and beyond.
func topKs(r *rand.Rand, matches int) []int {
	ks := []int{1, 2, 10, matches, matches + 1 + r.IntN(5)}
	if matches > 2 {
		ks = append(ks, 1+r.IntN(matches))
	}
	return slices.DeleteFunc(ks, func(k int) bool { return k < 1 })
}

// firstKept is the reference for a filtered search: the first k of all
// the hits keep accepts.
func firstKept(all []index.Hit, keep func(index.Hit) bool, k int) []index.Hit {
	var out []index.Hit
	for _, h := range all {
		if len(out) < k && keep(h) {
			out = append(out, h)
		}
	}
	return out
}

// Pruning does less work than the exhaustive scan on a skewed corpus,
// where the frequent terms carry small weights, even at 20k records and
// counting every posting a probe compares (it saves more as the corpus
// grows; see docs/benchmarks.md).
func TestPrunedSearchVisitsFewerPostings(t *testing.T) {
	e := mustStore(t, Options{})
	g := newZipfGen(3)
	recs := make([]index.Record, 20000)
	for i := range recs {
		recs[i] = childRecord(i, vector.Vector{Sparse: g.child()})
	}
	mustUpsert(t, e, recs...)
	idf := zipfIDF(len(recs))
	total, visited := 0, int64(0)
	for range 50 {
		q := g.query(idf)
		req := index.SearchRequest{Vector: vector.Vector{Sparse: q}, TopK: 10}
		searchBoth(t, e, req, nil)
		total += e.Postings(req.Vector)
		_, before := e.SparseWork()
		mustSearch(t, e, req)
		_, after := e.SparseWork()
		visited += after - before
	}
	if visited*4 > int64(total)*3 {
		t.Fatalf("pruned searches visited %d of %d postings; want under three quarters", visited, total)
	}
	t.Logf("pruned searches visited %d of %d postings (%.1f%%)", visited, total, 100*float64(visited)/float64(total))
}

// Block and group maxima track every write: appends, replacements,
// deletes and the compaction they trigger, and a save and load, leave each
// list's block maxima equal to a fresh computation, and its group maxima
// either absent (for a list not dense enough to need them) or fresh.
func TestBlockMaximaFollowWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	c := newPruneCorpus(t, r)
	for step := range 6 {
		checkMaxima(t, fmt.Sprintf("step %d", step), &c.e.sparse)
		var del []string
		for range len(c.ids) / 6 {
			del = append(del, c.ids[r.IntN(len(c.ids))])
		}
		if err := c.e.Delete(context.Background(), del); err != nil {
			t.Fatal(err)
		}
	}
	checkMaxima(t, "loaded", &saveLoad(t, c.e).sparse)
}

// checkMaxima fails unless every list of x has fresh block maxima and
// either a fresh group index, or none and a density too low to need one.
func checkMaxima(t *testing.T, label string, x *invertedIndex) {
	t.Helper()
	dense := 0
	for li, list := range x.lists {
		if !checkBlockMaxima(list, x.blockMax[li]) {
			t.Fatalf("%s: term %d block maxima %v do not match its postings", label, x.keys[li], x.blockMax[li])
		}
		last := list[len(list)-1].slot
		fresh := newGroupIndex(list)
		switch g := x.groups[li]; {
		case g.max == nil && denseEnough(len(list), last):
			t.Fatalf("%s: term %d has %d postings up to slot %d but no group index", label, x.keys[li], len(list), last)
		case g.max != nil && (tooSparse(len(list), last) || g.unit != fresh.unit || !slices.Equal(g.max, fresh.max) || !slices.Equal(g.starts, fresh.starts)):
			t.Fatalf("%s: term %d group index %v, want %v", label, x.keys[li], g, fresh)
		case g.max != nil:
			dense++
		}
	}
	if len(x.lists) > 0 && dense == 0 {
		t.Fatalf("%s: no list keeps group maxima; the corpus does not exercise them", label)
	}
}

// A list's unit is the smallest power of two of which maxima.MaxCode reach its
// largest weight, a group maximum the smallest number of units at or
// above the weight it bounds (for weights from subnormal to the largest
// float32), and the sweep's float32 cutoff is exactly where the widened
// comparison with the floor changes.
func TestGroupBoundRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 1))
	for range 100000 {
		top := math.Float32frombits(r.Uint32() & 0x7f7fffff)
		if r.IntN(20) == 0 {
			top = math.MaxFloat32
		}
		u := maxima.UnitFor(top)
		if frac, _ := math.Frexp(float64(u)); frac != 0.5 || float64(u)*maxima.MaxCode < float64(top) ||
			u > math.SmallestNonzeroFloat32 && float64(u)/2*maxima.MaxCode >= float64(top) {
			t.Fatalf("maxima.UnitFor(%v) = %v", top, u)
		}
		m := top * float32(r.Float64())
		h := maxima.CodeOf(m, u)
		if maxima.Decoded(h, u) < m || (h > 0 && maxima.Decoded(h-1, u) >= m) {
			t.Fatalf("maxima.CodeOf(%v) at unit %v = %v units", m, u, h)
		}
	}
	s := &pruneSearch{cur: make([]pruneCursor, 5), widen: 1 + 7*0x1p-23, slack: 6 * 0x1p-149}
	for range 10000 {
		s.theta = float64(math.Float32frombits(r.Uint32() & 0x7f7fffff))
		u := s.groupCutoff()
		if s.groupCannotReach(u) || !s.groupCannotReach(math.Nextafter32(u, 0)) {
			t.Fatalf("floor %v: cutoff %v is not where the comparison changes", s.theta, u)
		}
	}
}

// A filtered flat dense search returns the best of the records the filter
// keeps, as the unfiltered ranking lists them.
func TestSearchFilteredDense(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 8))
	e := mustStore(t, Options{Metric: index.Cosine})
	recs := make([]index.Record, 300)
	for i := range recs {
		recs[i] = index.Record{ID: fmt.Sprintf("d%03d", i), ParentID: "p", DocID: fmt.Sprintf("doc%d", i%4), Vector: vector.Vector{Dense: randDense(r, 8, i%3 == 0)}}
	}
	mustUpsert(t, e, recs...)
	keep := func(h index.Hit) bool { return h.DocID != "doc1" }
	for range 20 {
		q := vector.Vector{Dense: randDense(r, 8, false)}
		all := mustSearch(t, e, index.SearchRequest{Vector: q, TopK: len(recs)})
		got, err := e.SearchFiltered(context.Background(), index.SearchRequest{Vector: q, TopK: 7}, keep)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, "filtered dense", got, firstKept(all, keep, 7))
	}
}

// On a corpus whose terms are heavy in some runs of records and light in
// others, pruned search skips whole windows and still returns exactly what
// the exhaustive scan returns.
func TestPrunedSearchSkipsWindowsExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 34))
	for range 3 {
		c := newPruneCorpusOf(t, r, styleRegional, 8*windowSize)
		for range 60 {
			q := c.query(r)
			for _, k := range []int{1, 3, 10, 40} {
				searchBoth(t, c.e, index.SearchRequest{Vector: vector.Vector{Sparse: q}, TopK: k}, nil)
			}
		}
	}
}

// A term's group index appears once its list is dense enough, goes when
// the list thins out under the lower threshold, and comes back once the
// list is dense again, always equal to a fresh build while present, also
// once weights grow past what its unit reaches (the last slots' weights
// grow 500-fold).
func TestGroupIndexFollowsDensity(t *testing.T) {
	x := newInvertedIndex()
	one := func(slot uint32) {
		w := float32(slot%13) + 0.5
		if slot > 200000 {
			w *= 1 + float32(slot-200000)/100
		}
		x.add(slot, &vector.Sparse{Indices: []uint32{7}, Values: []float32{w}})
	}
	var seen []bool
	check := func(slot uint32) {
		list, gi := x.lists[0], x.groups[0]
		changed := len(seen) == 0 || seen[len(seen)-1] != (gi.max != nil)
		if gi.max != nil && (changed || len(list)%1000 == 0) {
			fresh := newGroupIndex(list)
			if gi.unit != fresh.unit || !slices.Equal(gi.max, fresh.max) || !slices.Equal(gi.starts, fresh.starts) {
				t.Fatalf("after slot %d: group index differs from a fresh build", slot)
			}
		}
		if gi.max == nil && denseEnough(len(list), slot) || gi.max != nil && tooSparse(len(list), slot) {
			t.Fatalf("after slot %d (%d postings): has group index %v", slot, len(list), gi.max != nil)
		}
		if changed {
			seen = append(seen, gi.max != nil)
		}
	}
	slot := uint32(0)
	for ; slot < 2000; slot++ { // every slot: dense
		one(slot)
		check(slot)
	}
	for ; slot < 200000; slot += 97 { // one slot in 97: thins out
		one(slot)
		check(slot)
	}
	for end := slot + 50000; slot < end; slot++ { // every slot again
		one(slot)
		check(slot)
	}
	if !slices.Equal(seen, []bool{true, false, true}) {
		t.Fatalf("group index presence went %v, want present, absent, present", seen)
	}
}

// advance moves a cursor to the first posting at or after the slot it
// seeks, over lists dense and sparse, evenly and unevenly spread, for
// seeks in increasing order and for seeks from a cursor moved back to the
// start (as batched group scoring moves a dense term's cursor).
func TestAdvanceFindsFirstPostingAtOrAfter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for trial := range 200 {
		n := 1 + r.IntN(5000)
		list := make([]posting, 0, n)
		slot := uint32(r.IntN(300))
		for range n {
			list = append(list, posting{slot: slot, weight: 1})
			switch trial % 3 {
			case 0: // dense, even
				slot += 1 + uint32(r.IntN(3))
			case 1: // sparse
				slot += 1 + uint32(r.IntN(60))
			default: // bursts and gaps
				if r.IntN(50) == 0 {
					slot += uint32(r.IntN(5000))
				}
				slot++
			}
		}
		last := list[len(list)-1].slot
		c := newPruneCursor(queryList{weight: 1, postings: list, blockMax: blockMaxima(list), groups: newGroupIndex(list)})
		if trial%2 == 1 {
			c.groups, c.starts = nil, nil
		}
		want := func(s uint32) int {
			i, _ := slices.BinarySearchFunc(list, s, func(p posting, s uint32) int { return cmp.Compare(p.slot, s) })
			return i
		}
		seek := uint32(0)
		for step := 0; seek <= last+10; step++ {
			if c.starts != nil && step%3 == 0 {
				c.pos = 0
			}
			c.advance(seek)
			if got := want(seek); c.pos != got {
				t.Fatalf("trial %d: advance(%d) at %d, want %d", trial, seek, c.pos, got)
			}
			seek += uint32(r.IntN(400))
		}
	}
}
