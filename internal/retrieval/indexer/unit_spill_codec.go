package indexer

import (
	"unsafe"

	"github.com/parentrag/parentrag/internal/index/bm25"
)

// Spilled unit layout: its split field (see encodeSplitField), then the
// child analyses and the context analyses as encodeAnalyses writes them,
// but each term as the id the build's bm25.CorpusStats gave it. So the
// second pass turns ids into vocabulary ids with a slice instead of
// looking up every term, and the next build counts a unit it reuses from
// its ids alone.

// spillAnalyses counts the child analyses of u into stats, interns its
// context analyses, and appends both, as ids, to dst. ids is scratch.
func spillAnalyses(dst []byte, u *Unit, stats *bm25.CorpusStats, ids *[]uint32) []byte {
	w := &unitWriter{b: dst}
	w.idAnalyses(u.ChildTerms, ids, stats.Add)
	w.idAnalyses(u.ContextTerms, ids, stats.Intern)
	return w.b
}

// idAnalyses appends a list of analyses, each term as the id idOf gives
// it, telling none from an empty list.
func (w *unitWriter) idAnalyses(as []bm25.Analysis, ids *[]uint32, idOf func(bm25.Analysis, []uint32) []uint32) {
	w.analysisList(as, func(a bm25.Analysis) {
		*ids = idOf(a, (*ids)[:0])
		for i, id := range *ids {
			w.uint(uint64(id))
			w.uint(uint64(a.Counts[i]))
		}
	})
}

// decodeSpilled decodes what a build spilled of a unit: its strings in
// memory of their own, its analyses as ids of the vocabulary stats fitted,
// without the terms that vocabulary lacks. It reads payload in place and
// keeps none of it, so the caller may reuse payload at once.
func decodeSpilled(payload []byte, stats *bm25.CorpusStats) (*Unit, error) {
	if len(payload) == 0 {
		return nil, errUnitPayload
	}
	// A view, not a copy: every string the unit keeps is read with text
	// or strs, which copy it, and the analyses are integers.
	r := &unitReader{s: unsafe.String(&payload[0], len(payload))}
	u := &Unit{}
	r.splitField(u)
	children, contexts := r.idLists()
	if r.err == nil && r.s != "" {
		r.err = errUnitPayload
	}
	if r.err != nil {
		return nil, r.err
	}
	u.ChildTerms, u.ContextTerms = children.vocabulary(stats), contexts.vocabulary(stats)
	return u, nil
}

// idList is a list of analyses as a spill holds them, flat: analysis i
// has tokens[i] tokens and the terms ids[ends[i-1]:ends[i]] (from 0 for
// the first), with their counts. A list that is none has none set.
type idList struct {
	none         bool
	tokens, ends []int
	ids, counts  []uint32
}

// idLists reads the child and the context analyses a spilled unit ends
// with, their ids and counts in two arrays sized for the rest of the
// payload (an entry takes two bytes at least), so that they do not grow.
func (r *unitReader) idLists() (children, contexts idList) {
	entries := len(r.s) / 2
	children = r.idList(make([]uint32, 0, entries), make([]uint32, 0, entries))
	rest := len(children.ids)
	contexts = r.idList(children.ids[rest:], children.counts[rest:])
	return children, contexts
}

// idList reads a list of analyses written by unitWriter.idAnalyses,
// appending its ids and counts to ids and counts.
func (r *unitReader) idList(ids, counts []uint32) idList {
	n := r.uint()
	if n == 0 || n-1 > uint64(len(r.s)) {
		if n != 0 {
			r.err = errUnitPayload
		}
		return idList{none: true}
	}
	l := idList{tokens: make([]int, n-1), ends: make([]int, n-1), ids: ids, counts: counts}
	for i := range l.tokens {
		l.tokens[i] = int(r.uint())
		for range r.count() {
			id, count := r.uint(), r.uint()
			if id > uint64(^uint32(0)) {
				r.err = errUnitPayload
			}
			l.ids, l.counts = append(l.ids, uint32(id)), append(l.counts, uint32(count))
		}
		l.ends[i] = len(l.ids)
	}
	return l
}

// analysis returns the i-th analysis's term ids.
func (l *idList) analysis(i int) []uint32 {
	start := 0
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.ids[start:l.ends[i]]
}

// vocabulary returns the analyses of l, each term as its id in the
// vocabulary stats fitted, dropping the terms that vocabulary lacks; nil
// for none. The analyses share l's arrays.
func (l *idList) vocabulary(stats *bm25.CorpusStats) []bm25.Analysis {
	if l.none {
		return nil
	}
	out := make([]bm25.Analysis, len(l.tokens))
	kept, start := 0, 0
	for i, end := range l.ends {
		from := kept
		for j := start; j < end; j++ {
			if v, ok := stats.VocabularyID(l.ids[j]); ok {
				l.ids[kept], l.counts[kept] = v, l.counts[j]
				kept++
			}
		}
		out[i] = bm25.Analysis{Tokens: l.tokens[i], IDs: l.ids[from:kept:kept], Counts: l.counts[from:kept:kept]}
		start = end
	}
	return out
}

// spilledCounts reads what counting a spilled unit takes, its child
// analyses, and checks that their term ids are below terms. The context
// analyses after them are left unread: the unit's checksum vouches for
// them, and the second pass reads them.
func spilledCounts(spilled []byte, terms int) (idList, error) {
	if len(spilled) == 0 {
		return idList{}, errUnitPayload
	}
	// A view, not a copy: spilled is never changed, and nothing read
	// from it outlives it but integers.
	r := &unitReader{s: unsafe.String(&spilled[0], len(spilled))}
	r.str() // the split field
	children := r.idList(nil, nil)
	if r.err == nil && !allBelow(children.ids, terms) {
		r.err = errUnitPayload
	}
	return children, r.err
}

// allBelow reports whether every id is below n.
func allBelow(ids []uint32, n int) bool {
	for _, id := range ids {
		if int(id) >= n {
			return false
		}
	}
	return true
}
