package segment

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/parentrag/parentrag/internal/index/vector"
)

// Search returns the hits SearchExhaustive returns, the same children in
// the same order with the same scores bit for bit, without scoring every
// posting: in each segment it adds up, for every parent, the bound of each
// query term over the parent's children (the largest weight any of them
// can have for it, see weigher.postingBound), scores first the parents of
// largest bound over all segments, which raises the k-th best score near
// its final value, then sweeps every segment's parents in order, scoring a
// parent's children only when its bound, widened by the largest rounding
// error of a float32 sum, still reaches the k-th score (see seedBest
// and sweep). A query with a negative weight, which no bound holds for,
// is searched exhaustively.
func (s *Set) Search(ctx context.Context, q *vector.Sparse, k int) ([]Hit, error) {
	return s.SearchFiltered(ctx, q, k, nil)
}

// SearchFiltered is Search restricted to the children keep accepts: the
// best k among them, exactly as if the others were absent (the hits
// SearchExhaustiveFiltered returns). keep sees each child without its
// score (its id, segment and slot), and only a child that would otherwise
// enter the k best, so a filter that refuses most children still costs
// little; a nil keep accepts every child.
func (s *Set) SearchFiltered(ctx context.Context, q *vector.Sparse, k int, keep func(Hit) bool) ([]Hit, error) {
	if err := s.checkRequest(q, k); err != nil {
		return nil, err
	}
	if slices.ContainsFunc(q.Values, func(v float32) bool { return v < 0 }) {
		return s.SearchExhaustiveFiltered(ctx, q, k, keep) // the bounds hold for positive weights only
	}
	best := topK{k: k, keep: keep}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	searches := s.newSearches(q, sc)
	release, err := seedBest(ctx, searches, s.seeds, &best)
	defer release()
	if err != nil {
		return nil, fmt.Errorf("segment search: %w", err)
	}
	for _, m := range searches {
		if err := m.sweep(ctx, &best); err != nil {
			return nil, fmt.Errorf("segment search: %w", err)
		}
	}
	return best.hits(), nil
}

// termCursor walks one query term's postings in one segment.
type termCursor struct {
	qw     float32
	pl     parentList
	cl     childList
	bounds []float32     // the bound of each of pl's postings, with its groups (see withGroups)
	dense  *parentMaxima // the term's bound at every parent, when it keeps them
	next   int           // the next parent posting
}

// at reports whether the cursor's next parent posting is parent's.
func (t *termCursor) at(parent uint32) bool {
	return t.next < t.pl.len() && t.pl.parent(t.next) == parent
}

// seek moves the cursor to its first parent posting at or after parent.
func (t *termCursor) seek(parent uint32) {
	t.next = seekParent(t.pl, t.next, parent)
}

// search is the state of one segment's pruned search.
type search struct {
	seg     *Segment
	index   int
	w       weigher
	terms   []*termCursor // the query's terms in the segment, in id order
	slack   float64       // how much a float32 sum of the terms can exceed their exact sum
	scores  []float32     // the scores of the children of the parent being scored
	here    []termAt      // the query terms' postings at the parents being scored
	located []parentAt    // the parents being scored
	batch   []uint32      // the parents sweep scores next
	acc     []float32     // each parent's bound (see seedBest)
}

// newSearches returns the pruned search of q in each of the set's
// segments, in order, each with a cursor for every term of q the segment
// holds, in id order. They live in sc, whose earlier searches they
// replace, reusing its memory.
func (s *Set) newSearches(q *vector.Sparse, sc *scratch) []*search {
	if cap(sc.searches) < len(s.segs) {
		sc.searches, sc.out = make([]search, len(s.segs)), make([]*search, len(s.segs))
	}
	searches, out := sc.searches[:len(s.segs)], sc.out[:len(s.segs)]
	for i, seg := range s.segs {
		m := &searches[i]
		*m = search{
			seg: seg, index: i, w: s.weigher(seg), terms: m.terms[:0],
			scores: m.scores[:0], here: m.here[:0], located: m.located[:0], batch: m.batch[:0],
		}
		out[i] = m
	}
	held := 0
	for _, id := range q.Indices {
		held += len(s.terms.of(id))
	}
	if cap(sc.cursors) < held {
		sc.cursors = make([]termCursor, 0, held)
	}
	cursors := sc.cursors[:0] // never grown past its capacity: the searches point into it
	for i, id := range q.Indices {
		if q.Values[i] == 0 {
			continue
		}
		for _, in := range s.terms.of(id) {
			cursors = append(cursors, s.cursor(in, q.Values[i]))
			m := &searches[in.seg]
			m.terms = append(m.terms, &cursors[len(cursors)-1])
		}
	}
	for _, m := range out {
		// A float32 sum of n non-negative terms exceeds their exact sum by
		// a factor of at most (1+2⁻²⁴)ⁿ⁻¹; the float64 sums here are exact
		// to far less. Twice that, and a term more, is ample.
		m.slack = 1 + float64(len(m.terms)+1)*0x1p-23
	}
	return out
}

// scratch is the memory of one search, reused by the next.
type scratch struct {
	searches []search
	out      []*search
	cursors  []termCursor
}

// scratchPool holds the memory of searches done, for those to come.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// cursor returns a cursor at the start of the postings of the term of
// query weight qw where in places it.
func (s *Set) cursor(in termIn, qw float32) termCursor {
	seg, k := s.segs[in.seg], int(in.k)
	lo, hi := span(seg.parent.ends, k)
	return termCursor{
		qw: qw, pl: seg.parents(k), cl: seg.children(k),
		bounds: s.bounds[in.seg][lo:hi], dense: s.dense[in.seg][k],
	}
}

// scoreParents scores each child of parents, in increasing order, term
// by term in id order as SearchExhaustive does, and offers it to best, but
// for the parents none of whose groups of children could enter best (see
// groupsReach). It first finds every term's posting
// at each of them, then adds the terms' weights: the postings' reads do
// not wait on one another, so the processor overlaps their cache misses.
func (m *search) scoreParents(parents []uint32, best *topK) {
	here := m.here[:0]
	located := m.located[:0]
	for _, parent := range parents {
		here = m.locate(parent, here)
		located = append(located, m.parentAt(parent, len(here)))
	}
	m.here, m.located = here, located
	from := 0
	for i, parent := range parents {
		if at := here[from:located[i].end]; m.groupsReach(located[i], at, float64(best.floor())) {
			m.scoreAt(parent, at, best)
		}
		from = located[i].end
	}
}

// locate appends to here the posting at parent of each query term that
// has one, in id order.
func (m *search) locate(parent uint32, here []termAt) []termAt {
	for _, t := range m.terms {
		if t.dense != nil {
			j, ok := t.dense.posting(parent)
			if !ok {
				continue
			}
			t.next = j
		} else if t.seek(parent); !t.at(parent) {
			continue
		}
		here = append(here, termAt{t: t, j: t.next, context: t.pl.context(t.next), bound: t.bounds[t.next]})
	}
	return here
}

// scoreAt scores each child of parent from here, the query terms'
// postings at parent, and offers it to best.
func (m *search) scoreAt(parent uint32, here []termAt, best *topK) {
	first, end := m.seg.parentFirst[parent], m.seg.parentFirst[parent+1]
	scores := slices.Grow(m.scores[:0], int(end-first))[:end-first]
	clear(scores)
	m.scores = scores
	for i := range here {
		m.addTerm(&here[i], parent, scores)
	}
	for i, score := range scores {
		if score > 0 {
			slot := first + uint32(i)
			best.offer(candidate{score: score, seg: m.index, slot: slot, id: m.seg.idBytes(slot)})
		}
	}
}

// parentAt is a parent being scored: where its query terms' postings end
// in search.here, how many children it has and its context's length
// normalisation (read as it is found, like termAt's bound).
type parentAt struct {
	end         int
	children    uint32
	contextNorm float64
}

// parentAt returns parent's parentAt, its postings ending at end.
func (m *search) parentAt(parent uint32, end int) parentAt {
	return parentAt{
		end:         end,
		children:    m.seg.parentFirst[parent+1] - m.seg.parentFirst[parent],
		contextNorm: m.w.contextNorm(parent),
	}
}

// termAt is a query term's posting at the parent being scored: which of
// its parent postings it is, its context frequency and its bound (read
// as it is found, so that the reads of a batch of parents overlap).
type termAt struct {
	t       *termCursor
	j       int
	context uint32
	bound   float32
}

// addTerm adds h's term's weight for each child of parent times its query
// weight to scores, which starts at the parent's first child.
func (m *search) addTerm(h *termAt, parent uint32, scores []float32) {
	t, first := h.t, m.seg.parentFirst[parent]
	ch, chEnd := t.pl.childSpan(h.j, t.cl.len())
	if h.context == 0 {
		for ; ch < chEnd; ch++ {
			c := t.cl.slot(ch)
			scores[c-first] = scores[c-first] + t.qw*m.w.own(t.cl.tf(ch), c)
		}
		return
	}
	scaled := m.w.context(h.context, parent)
	for i := range scores {
		c := first + uint32(i)
		if ch < chEnd && t.cl.slot(ch) == c {
			scores[i] = scores[i] + t.qw*(m.w.own(t.cl.tf(ch), c)+scaled)
			ch++
		} else {
			scores[i] = scores[i] + t.qw*scaled
		}
	}
}

// seekParent returns the first index from i on of a posting of pl whose
// parent is at least v, by galloping then binary search.
func seekParent(pl parentList, i int, v uint32) int {
	n := pl.len()
	if i >= n || pl.parent(i) >= v {
		return i
	}
	step := 1
	lo := i
	for lo+step < n && pl.parent(lo+step) < v {
		lo += step
		step *= 2
	}
	hi := min(n, lo+step+1) // pl.parent(hi) >= v, or hi == n
	for lo+1 < hi {         // pl.parent(lo) < v
		mid := int(uint(lo+hi) >> 1)
		if pl.parent(mid) < v {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
