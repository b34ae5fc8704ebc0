// Package blevebench measures parentrag's exact BM25 child search side by
// side with bleve's BM25 search over the same children, in one run. It is
// a module of its own so that bleve never enters parentrag's dependencies;
// run it with `make bench-bleve`.
package blevebench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/parentrag/parentrag/internal/retrieval"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/split"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
	"github.com/parentrag/parentrag/internal/retrieval/vectorstore"
)

// childrenPerDoc is how many children the default policy makes of a
// synthetic document on average; it sizes the corpora.
const childrenPerDoc = 9.8

// BenchmarkSideBySide indexes the same synthetic children (the default
// policy's split of Zipf-distributed English-like documents) in
// parentrag's embedded store, with plain BM25 (context weight 0), and in a
// bleve scorch index merged to one segment, with bleve's BM25 and the same
// k1 and b, then answers the same 4 to 8 word questions with both, one
// after the other for each question, top 20. It reports each engine's p50
// and p99 wall time and process CPU time per question and the ratios of
// bleve's to parentrag's. Sizes come from PARENTRAG_BLEVE_SIZES (children,
// comma separated; default 100000). Run with -cpu 1.
func BenchmarkSideBySide(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("children=%d", n), func(b *testing.B) {
			gen := synthtest.New(5, 20000)
			ix := parentragIndex(b, gen.Documents(int(float64(n)/childrenPerDoc+0.5)))
			idx := bleveIndex(b, ix.Children, childTexts(ix))
			defer idx.Close()
			questions := gen.Questions(1000)
			sideBySide(b, ix, idx, questions)
			b.ReportMetric(float64(len(ix.Children)), "children")
		})
	}
}

// benchSizes reads PARENTRAG_BLEVE_SIZES.
func benchSizes(b *testing.B) []int {
	spec := os.Getenv("PARENTRAG_BLEVE_SIZES")
	if spec == "" {
		spec = "100000"
	}
	var sizes []int
	for _, f := range strings.Split(spec, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil || n <= 0 {
			b.Fatalf("PARENTRAG_BLEVE_SIZES: %q is not a positive number of children", f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// parentragIndex builds the children with the default policy's sizes and
// plain BM25, which is what bleve scores.
func parentragIndex(b *testing.B, docs []hierarchy.Document) *indexer.Index {
	b.Helper()
	parent, err := split.NewRecursive(split.DefaultOptions(1500, 0))
	if err != nil {
		b.Fatal(err)
	}
	child, err := split.NewRecursive(split.DefaultOptions(300, 30))
	if err != nil {
		b.Fatal(err)
	}
	lex, err := embed.NewLexical(embed.DefaultK1, embed.DefaultB)
	if err != nil {
		b.Fatal(err)
	}
	builder := &hierarchy.Builder{Strategy: hierarchy.ParentChild, Revision: "bench", Parent: parent, Child: child}
	ix, err := indexer.Build(context.Background(), docs, builder, lex, indexer.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return ix
}

// childTexts returns each child's text.
func childTexts(ix *indexer.Index) []string {
	out := make([]string, len(ix.Children))
	for i, c := range ix.Children {
		out[i] = c.Text
	}
	return out
}

// bleveIndex indexes texts, keyed by child id, in a scorch index with the
// English analyser (stop words, Porter stems) and BM25 with parentrag's
// default k1 and b, nothing stored beside the postings, and merges it to
// one segment.
func bleveIndex(b *testing.B, children []hierarchy.Child, texts []string) bleve.Index {
	b.Helper()
	search.BM25_k1, search.BM25_b = embed.DefaultK1, embed.DefaultB
	field := bleve.NewTextFieldMapping()
	field.Analyzer = en.AnalyzerName
	field.Store, field.IncludeTermVectors, field.IncludeInAll, field.DocValues = false, false, false, false
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("text", field)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.ScoringModel = "bm25"
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	idx, err := bleve.New(b.TempDir()+"/bleve", m)
	if err != nil {
		b.Fatal(err)
	}
	batch := idx.NewBatch()
	for i, c := range children {
		if err := batch.Index(c.ID, map[string]any{"text": texts[i]}); err != nil {
			b.Fatal(err)
		}
		if batch.Size() == 2000 || i == len(children)-1 {
			if err := idx.Batch(batch); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	mergeToOneSegment(b, idx)
	return idx
}

// mergeToOneSegment force-merges a scorch index, so bleve searches one
// segment as parentrag searches one index.
func mergeToOneSegment(b *testing.B, idx bleve.Index) {
	b.Helper()
	adv, err := idx.Advanced()
	if err != nil {
		b.Fatal(err)
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		b.Fatalf("bleve index is %T, not scorch", adv)
	}
	if err := s.ForceMerge(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
}

// sideBySide answers question i with parentrag (embed the question,
// search the children) and then with bleve, once per iteration, and
// reports both engines' latencies, their ratios, and the share of bleve's
// hits parentrag found too (top20-shared), which shows both answer the
// same question.
func sideBySide(b *testing.B, ix *indexer.Index, idx bleve.Index, questions []string) {
	store := ix.Store.(*vectorstore.Embedded)
	var ours, theirs timings
	var shared, found int
	i := 0
	for b.Loop() {
		q := questions[i%len(questions)]
		var mine []vectorstore.Hit
		var others *bleve.SearchResult
		ours.time(b, func() (err error) {
			mine, err = searchParentrag(ix, store, q)
			return err
		})
		theirs.time(b, func() (err error) {
			others, err = searchBleve(idx, q)
			return err
		})
		shared, found = shared+overlap(mine, others), found+len(others.Hits)
		i++
	}
	if found == 0 {
		b.Fatal("bleve found nothing for any question")
	}
	b.ReportMetric(float64(shared)/float64(found), "top20-shared")
	ours.report(b, "parentrag")
	theirs.report(b, "bleve")
	b.ReportMetric(theirs.wallQuantile(0.50)/ours.wallQuantile(0.50), "p50-ratio")
	b.ReportMetric(theirs.wallQuantile(0.99)/ours.wallQuantile(0.99), "p99-ratio")
}

// searchParentrag embeds q and searches the children, top 20.
func searchParentrag(ix *indexer.Index, store *vectorstore.Embedded, q string) ([]vectorstore.Hit, error) {
	v, err := ix.Embedder.EmbedQuery(context.Background(), q)
	if err != nil {
		return nil, err
	}
	return store.Search(context.Background(), vectorstore.SearchRequest{Vector: v, TopK: retrieval.DefaultChildTopK})
}

// searchBleve matches q against the children's text field, top 20.
func searchBleve(idx bleve.Index, q string) (*bleve.SearchResult, error) {
	query := bleve.NewMatchQuery(q)
	query.SetField("text")
	return idx.Search(bleve.NewSearchRequestOptions(query, retrieval.DefaultChildTopK, 0, false))
}

// overlap counts bleve's hits that parentrag found too: the analysers
// differ (Porter against Porter2 stems, other stop words), so the lists
// agree mostly, not exactly.
func overlap(mine []vectorstore.Hit, others *bleve.SearchResult) int {
	ids := make(map[string]bool, len(mine))
	for _, h := range mine {
		ids[h.ID] = true
	}
	n := 0
	for _, h := range others.Hits {
		if ids[h.ID] {
			n++
		}
	}
	return n
}

// timings collects one engine's per-question wall and process CPU times.
type timings struct{ wall, cpu []time.Duration }

// time runs one question and records how long it took.
func (t *timings) time(b *testing.B, question func() error) {
	start, startCPU := time.Now(), synthtest.ProcessCPUTime()
	if err := question(); err != nil {
		b.Fatal(err)
	}
	t.wall = append(t.wall, time.Since(start))
	t.cpu = append(t.cpu, synthtest.ProcessCPUTime()-startCPU)
}

// wallQuantile returns the q-quantile of the wall times, in milliseconds.
func (t *timings) wallQuantile(q float64) float64 { return quantile(t.wall, q) }

// report reports the engine's p50 and p99 wall and CPU times.
func (t *timings) report(b *testing.B, engine string) {
	b.ReportMetric(quantile(t.wall, 0.50), engine+"-p50-ms")
	b.ReportMetric(quantile(t.wall, 0.99), engine+"-p99-ms")
	b.ReportMetric(quantile(t.cpu, 0.50), engine+"-p50-cpu-ms")
	b.ReportMetric(quantile(t.cpu, 0.99), engine+"-p99-cpu-ms")
}

// quantile returns the q-quantile of d in milliseconds.
func quantile(d []time.Duration, q float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))]) / 1e6
}
