package eval

import (
	"context"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/docs"
	"github.com/parentrag/parentrag/internal/document"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// docsQuestion is a question about parentrag's own documentation, judged
// by hand: the sections that answer it (document and last heading) and a
// phrase of the answer that occurs in them.
type docsQuestion struct {
	text     string
	sections []string // "docs/<page>#<heading>"
	answers  []string
}

// docsQuestions are written against the pages under docs/, one or two per
// section asked about, with answers quoted from those sections.
var docsQuestions = []docsQuestion{
	{"What happens to the serving revision when a build fails?",
		[]string{"docs/rollout.md#What happens when a policy changes", "docs/concepts.md#Revisions"},
		[]string{"keeps serving every query", "never touches the revision that is serving"}},
	{"How does a context budget trim parents?", []string{"docs/retrieval.md#Context budgets"}, []string{"widened evenly on both sides"}},
	{"Where do the golden queries of a quality gate go?", []string{"docs/rollout.md#A quality gate"}, []string{"Put golden queries in a ConfigMap"}},
	{"How do I roll back to a previous revision?", []string{"docs/rollout.md#Roll back"}, []string{"parentrag.io/pin="}},
	{"What happens when the operator restarts in the middle of a build?", []string{"docs/rollout.md#Crashes and restarts"}, []string{"builds the revision again"}},
	{"How much storage does a rollout hold?", []string{"docs/rollout.md#What a rollout costs"}, []string{"Storage doubles for as long as"}},
	{"How can I try a candidate with real questions before promoting it?", []string{"docs/rollout.md#Try a candidate before promoting it"}, []string{"track: Candidate"}},
	{"Which k1 and b does the lexical BM25 embedder use by default?", []string{"docs/retrieval.md#The lexical embedder (offline default)"}, []string{"is 0.9 and `b` 0.4"}},
	{"How are the sparse and dense rankings fused in hybrid search?", []string{"docs/retrieval.md#Hybrid search"}, []string{"reciprocal rank fusion"}},
	{"What if fewer than maxParents distinct parents are among the fetched children?",
		[]string{"docs/retrieval.md#Grouping and over-fetching", "docs/concepts.md#Child in, parent out"},
		[]string{"twice as many children are fetched", "more children are\nfetched, doubling each time"}},
	{"Where does a sentence end in a sentence window?", []string{"docs/retrieval.md#Sentence windows"}, []string{"followed by a space and a capital"}},
	{"Which endpoints can compute dense embeddings of children?", []string{"docs/retrieval.md#Dense embeddings"}, []string{"OpenAI, Text Embeddings Inference, Ollama, vLLM"}},
	{"Why are documents split into two levels?", []string{"docs/concepts.md#Why two levels"}, []string{"Parent-child retrieval takes both"}},
	{"Where does the parent store live in a cluster?", []string{"docs/concepts.md#Where things live"}, []string{"ConfigMaps, or a PersistentVolumeClaim"}},
	{"What happens when I delete a ChunkingPolicy that Corpora still use?", []string{"docs/spec/chunkingpolicy.md#Deleting a policy that is in use"}, []string{"DeletionBlocked"}},
	{"What does deletionPolicy Retain leave in Milvus?", []string{"docs/spec/corpus.md#`spec.deletionPolicy` (`Delete` or `Retain`, default `Delete`)"}, []string{"leaves the alias and the collections"}},
	{"What does suspending a Corpus do?", []string{"docs/spec/corpus.md#`spec.suspend`"}, []string{"stops reconciliation"}},
	{"Which access modes does a claim need for a Retriever with several replicas?", []string{"docs/spec/corpus.md#`spec.parentStore`"}, []string{"ReadOnlyMany"}},
	{"Which ConfigMaps does the operator cache in memory?", []string{"docs/operator.md#What the operator caches"}, []string{"watched as metadata only"}},
	{"What does parentrag local demo index?", []string{"docs/cli.md#parentrag local demo"}, []string{"compiled into the binary"}},
	{"Where does cluster-up record the host changes that cluster-down restores?", []string{"docs/cluster.md#What it changes on the host, and how cluster-down restores it"}, []string{"/var/lib/parentrag-cluster/host"}},
}

// handbookSpec is the docs sample's policy: Markdown separators, parents
// of 1500 characters, children of 300 with an overlap of 30, with the
// given parent boundaries.
func handbookSpec(boundaries v1alpha1.ParentBoundaries) *v1alpha1.ChunkingPolicySpec {
	return &v1alpha1.ChunkingPolicySpec{
		Strategy:   v1alpha1.StrategyParentChild,
		Separators: &v1alpha1.Separators{Preset: v1alpha1.SeparatorsMarkdown},
		Parent:     &v1alpha1.ChunkSize{ChunkSize: 1500, Boundaries: boundaries},
		Child:      &v1alpha1.ChunkSize{ChunkSize: 300, ChunkOverlap: 30},
	}
}

// docsCorpus returns the pages under docs/ as documents (as `parentrag
// local demo` indexes them) whose judged units are their sections.
func docsCorpus(t *testing.T) *Corpus {
	t.Helper()
	headers := split.NewMarkdownHeaderSplitter(split.MarkdownHeaderOptions{Headers: split.MarkdownHeadings()})
	c := &Corpus{paragraphs: map[string][]paragraph{}}
	err := fs.WalkDir(docs.Files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(docs.Files, path)
		if err != nil {
			return err
		}
		doc := hierarchy.Document{ID: "docs/" + path, Title: document.MarkdownTitle(string(data)), Text: string(data)}
		c.Docs = append(c.Docs, doc)
		c.paragraphs[doc.ID] = sectionsOf(doc, headers)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// withoutPage returns c without the document id.
func withoutPage(c *Corpus, id string) *Corpus {
	out := &Corpus{paragraphs: map[string][]paragraph{}}
	for _, doc := range c.Docs {
		if doc.ID != id {
			out.Docs = append(out.Docs, doc)
			out.paragraphs[doc.ID] = c.paragraphs[doc.ID]
		}
	}
	return out
}

// sectionsOf returns a document's sections as judged units named
// "<doc>#<last heading>", each from its heading line to the next heading.
func sectionsOf(doc hierarchy.Document, headers *split.MarkdownHeaderSplitter) []paragraph {
	end := utf8.RuneCountInString(doc.Text)
	var out []paragraph
	for _, h := range headers.Headings(doc.Text) {
		if n := len(out); n > 0 {
			out[n-1].end = h.Start
		}
		out = append(out, paragraph{id: doc.ID + "#" + h.Path[len(h.Path)-1], start: h.Start, end: end})
	}
	return out
}

// docsQueries returns the questions as queries and qrels.
func docsQueries(t *testing.T, c *Corpus) ([]Query, Qrels) {
	t.Helper()
	known := map[string]bool{}
	for _, paras := range c.paragraphs {
		for _, p := range paras {
			known[p.id] = true
		}
	}
	qrels := Qrels{}
	var queries []Query
	for i, q := range docsQuestions {
		id := "docs-" + strconv.Itoa(i)
		qrels[id] = map[string]bool{}
		for _, s := range q.sections {
			if !known[s] {
				t.Fatalf("question %q names section %q, which the docs do not have", q.text, s)
			}
			qrels[id][s] = true
		}
		queries = append(queries, Query{ID: id, Text: q.text, Answers: q.answers})
	}
	return queries, qrels
}

// docsIndex indexes the docs with a policy and the offline embedder.
func docsIndex(t *testing.T, c *Corpus, spec *v1alpha1.ChunkingPolicySpec) (*indexer.Index, *policy.Compiled) {
	t.Helper()
	compiled, err := policy.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	e, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := indexer.Build(context.Background(), c.Docs, compiled.Builder, e, indexer.Options{ContextWeight: indexer.DefaultContextWeight})
	if err != nil {
		t.Fatal(err)
	}
	return ix, compiled
}

func TestSectionParentsOnDocsAreNeverUnderMinChunkSize(t *testing.T) {
	c := docsCorpus(t)
	ix, compiled := docsIndex(t, c, handbookSpec(v1alpha1.BoundariesSections))
	minSize := compiled.Spec.Parent.MinChunkSize
	if minSize != 150 {
		t.Fatalf("minChunkSize = %d, want the default of a tenth of 1500", minSize)
	}
	docLength, docText := map[string]int{}, map[string][]rune{}
	for _, d := range c.Docs {
		docLength[d.ID] = utf8.RuneCountInString(strings.TrimSpace(d.Text))
		docText[d.ID] = []rune(d.Text)
	}
	for _, p := range ix.Parents {
		n := utf8.RuneCountInString(p.Text)
		if n < minSize && n < docLength[p.DocID] {
			t.Errorf("%s parent %d has %d characters, under minChunkSize %d: %q", p.DocID, p.Ordinal, n, minSize, p.Text)
		}
		if strings.HasPrefix(p.Text, "```") && insideCode(docText[p.DocID][:p.Start]) {
			t.Errorf("%s parent %d starts with the closing fence of a code block: %q", p.DocID, p.Ordinal, firstLine(p.Text))
		}
	}
}

func TestSectionParentsAnswerTheDemoQuestions(t *testing.T) {
	c := docsCorpus(t)
	ix, _ := docsIndex(t, c, handbookSpec(v1alpha1.BoundariesSections))
	r := ix.Retriever()
	tests := []struct {
		query, answer string
		headings      []string
	}{
		{"What happens to the serving revision when a build fails?", "keeps serving every query",
			[]string{"Rolling out new chunking", "What happens when a policy changes"}},
		{"How does a context budget trim parents?", "widened evenly on both sides",
			[]string{"How retrieval works", "Context budgets"}},
	}
	for _, tt := range tests {
		results, err := r.Retrieve(context.Background(), tt.query, retrieve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(results) == 0 {
			t.Fatalf("%q: no result", tt.query)
		}
		top := results[0]
		if !slices.Equal(top.HeadingPath, tt.headings) || !strings.Contains(top.Text, tt.answer) {
			t.Errorf("%q: top parent is %s under %q, starting %q; want the section %q holding %q",
				tt.query, top.DocID, top.HeadingPath, firstLine(top.Text), tt.headings, tt.answer)
		}
		if want := "## " + tt.headings[len(tt.headings)-1]; !strings.HasPrefix(top.Text, want) {
			t.Errorf("%q: top parent starts %q, want its heading %q", tt.query, firstLine(top.Text), want)
		}
	}
}

// TestCodeThatQuotesAQuestionDoesNotAnswerIt asks the docs a question that
// a fenced code block of docs/cluster.md quotes word for word (in a curl
// command) and requires the best parent to be found by prose: its best
// match lies outside any code block.
func TestCodeThatQuotesAQuestionDoesNotAnswerIt(t *testing.T) {
	c := docsCorpus(t)
	ix, _ := docsIndex(t, c, handbookSpec(v1alpha1.BoundariesSections))
	results, err := ix.Retriever().Retrieve(context.Background(), "How does a rollout work?", retrieve.Options{})
	if err != nil || len(results) == 0 {
		t.Fatalf("no result: %v", err)
	}
	top := results[0]
	m := top.Matches[0]
	if m.Start < 0 || insideCode([]rune(top.Text)[:m.Start]) {
		t.Errorf("the best parent, %s under %q, is found by a code block: %q", top.DocID, top.HeadingPath, firstLine(string([]rune(top.Text)[max(m.Start, 0):])))
	}
}

// TestSectionParentsAnswerDocsQuestionsBetter scores the docs questions
// with recursive and with section parents of the docs sample's policy
// (the table in docs/evaluation.md), and requires section parents to hold
// the answer in their top parent at least as often, and as often at every
// budget. The page of the table, docs/evaluation.md, is left out: it
// speaks of the questions, and no page may answer a question by
// describing it.
func TestSectionParentsAnswerDocsQuestionsBetter(t *testing.T) {
	c := withoutPage(docsCorpus(t), "docs/evaluation.md")
	queries, qrels := docsQueries(t, c)
	budgets := []int{100, 200, 400}
	scores := map[v1alpha1.ParentBoundaries]docsScore{}
	for _, b := range []v1alpha1.ParentBoundaries{v1alpha1.BoundariesRecursive, v1alpha1.BoundariesSections} {
		scores[b] = scoreDocs(t, c, queries, qrels, handbookSpec(b), budgets)
		s := scores[b]
		t.Logf("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |", b, s.parents, s.top1, *s.report.NDCG10, *s.report.Hit1,
			s.report.AnswerInContext["100"], s.report.AnswerInContext["200"], s.report.AnswerInContext["400"])
	}
	rec, sec := scores[v1alpha1.BoundariesRecursive], scores[v1alpha1.BoundariesSections]
	if sec.top1 < rec.top1 {
		t.Errorf("answer in the top parent: sections %.3f < recursive %.3f", sec.top1, rec.top1)
	}
	for _, b := range budgets {
		key := strconv.Itoa(b)
		if sec.report.AnswerInContext[key] < rec.report.AnswerInContext[key] {
			t.Errorf("answer-in-context@%d: sections %.3f < recursive %.3f", b, sec.report.AnswerInContext[key], rec.report.AnswerInContext[key])
		}
	}
}

// docsScore is how one policy does on the docs questions.
type docsScore struct {
	parents int
	top1    float64 // share of questions whose top parent holds an answer
	report  Report
}

// scoreDocs evaluates parent-child retrieval with spec on the docs
// questions.
func scoreDocs(t *testing.T, c *Corpus, queries []Query, qrels Qrels, spec *v1alpha1.ChunkingPolicySpec, budgets []int) docsScore {
	t.Helper()
	ix, compiled := docsIndex(t, c, spec)
	var s docsScore
	s.parents = len(ix.Parents)
	r := ix.Retriever()
	for _, q := range queries {
		results, err := r.Retrieve(context.Background(), q.Text, retrieve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(results) > 0 && containsAnswer(strings.Join(strings.Fields(results[0].Text), " "), q.Answers) {
			s.top1++
		}
	}
	s.top1 /= float64(len(queries))
	reports, err := Run(context.Background(), c, queries, qrels, []string{ParentChild}, lexicalConfig(compiled.Builder, budgets))
	if err != nil {
		t.Fatal(err)
	}
	s.report = reports[0]
	return s
}

// insideCode reports whether the end of text is inside a fenced code
// block: an odd number of its lines open or close one.
func insideCode(text []rune) bool {
	fences := 0
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fences++
		}
	}
	return fences%2 == 1
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// lexicalConfig evaluates with builder, the offline embedder and its
// default context weight, the Retriever's defaults, and budgeted
// retrievals of up to 20 parents.
func lexicalConfig(builder *hierarchy.Builder, budgets []int) Config {
	return Config{
		Builder:          builder,
		NewEmbedder:      func() (embed.Embedder, error) { return bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB) },
		ContextWeight:    indexer.DefaultContextWeight,
		Budgets:          budgets,
		MaxParents:       retrieve.DefaultMaxParents,
		BudgetMaxParents: 20,
	}
}
