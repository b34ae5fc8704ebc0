package indexer

import (
	"github.com/parentrag/parentrag/internal/retrieval/embed"
)

// Spilled unit layout: the split field of a unit payload (see
// encodeUnitPayload), then the child analyses and the context analyses as
// a unit payload writes them, but each term as the id the build's
// embed.CorpusStats gave it. So the spill is smaller than the unit
// payloads, and the second pass turns ids into vocabulary ids with a
// slice instead of looking up every term.

// spillAnalyses counts the child analyses of u into stats, interns its
// context analyses, and appends both, as ids, to dst. ids is scratch.
func spillAnalyses(dst []byte, u *Unit, stats *embed.CorpusStats, ids *[]uint32) []byte {
	w := &unitWriter{b: dst}
	w.idAnalyses(u.ChildTerms, ids, stats.Add)
	w.idAnalyses(u.ContextTerms, ids, stats.Intern)
	return w.b
}

// idAnalyses appends a list of analyses, each term as the id idOf gives
// it, telling none from an empty list.
func (w *unitWriter) idAnalyses(as []embed.Analysis, ids *[]uint32, idOf func(embed.Analysis, []uint32) []uint32) {
	w.analysisList(as, func(a embed.Analysis) {
		*ids = idOf(a, (*ids)[:0])
		for i, id := range *ids {
			w.uint(uint64(id))
			w.uint(uint64(a.Counts[i]))
		}
	})
}

// decodeSpilled decodes what a build spilled of a unit: its texts in
// memory of their own, its analyses as ids of the vocabulary stats fitted,
// without the terms that vocabulary lacks.
func decodeSpilled(payload []byte, stats *embed.CorpusStats) (*Unit, error) {
	r := &unitReader{s: string(payload)}
	u := &Unit{}
	r.splitField(u, false)
	u.ChildTerms = r.idAnalyses(stats)
	u.ContextTerms = r.idAnalyses(stats)
	if r.err == nil && r.s != "" {
		r.err = errUnitPayload
	}
	if r.err != nil {
		return nil, r.err
	}
	return u, nil
}

// idAnalyses reads a list of analyses written by unitWriter.idAnalyses,
// keeping of each the terms stats's vocabulary holds, as their
// vocabulary ids.
func (r *unitReader) idAnalyses(stats *embed.CorpusStats) []embed.Analysis {
	out := r.analysisList()
	for i := range out {
		out[i].Tokens = int(r.uint())
		m := r.count()
		out[i].IDs, out[i].Counts = make([]uint32, 0, m), make([]uint32, 0, m)
		for range m {
			id, count := r.uint(), r.uint()
			if id > uint64(^uint32(0)) {
				r.err = errUnitPayload
				return nil
			}
			if v, ok := stats.VocabularyID(uint32(id)); ok {
				out[i].IDs = append(out[i].IDs, v)
				out[i].Counts = append(out[i].Counts, uint32(count))
			}
		}
	}
	return out
}
