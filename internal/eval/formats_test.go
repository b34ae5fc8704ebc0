package eval

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/document"
	dt "github.com/parentrag/parentrag/internal/document/documenttest"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/repo"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// formatSet is a corpus of real public documents in one format, with
// questions written and judged against it (test/formats).
type formatSet struct {
	name, queries, qrels string
	// files lists the documents: their path and their id.
	files func(t *testing.T) map[string]string
	// raw extracts a file's plain text with the reference extractor.
	raw func(t *testing.T, path string) string
}

// formatSets are the Bash Reference Manual as a PDF (196 pages with an
// outline) and CMake's command reference as a site of 127 HTML pages.
var formatSets = []formatSet{
	{name: "bash manual (PDF)", queries: "bash-questions.jsonl",
		files: func(t *testing.T) map[string]string {
			return map[string]string{dt.Installed(t, dt.BashRefPDF, dt.BashDocPackage): "bashref.pdf"}
		},
		raw: func(t *testing.T, path string) string {
			return command(t, dt.Program(t, "pdftotext", dt.PopplerPackage), "-enc", "UTF-8", path, "-")
		}},
	{name: "CMake commands (HTML)", queries: "cmake-questions.jsonl", qrels: "cmake-qrels.tsv",
		files: func(t *testing.T) map[string]string {
			pages, _ := filepath.Glob(filepath.Join(dt.Installed(t, dt.CMakeHTML, dt.CMakePackage), "command", "*.html"))
			out := map[string]string{}
			for _, p := range pages {
				out[p] = filepath.Base(p)
			}
			return out
		},
		raw: func(t *testing.T, path string) string {
			return command(t, dt.Program(t, "w3m", "w3m"), "-dump", "-T", "text/html", "-cols", "200", "-O", "UTF-8", path)
		}},
}

// command runs a program and returns what it printed.
func command(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return string(out)
}

// formatVariant is one way of turning the set's files into parents.
type formatVariant struct {
	name string
	// converted: parentrag's Markdown (else the reference's plain text).
	converted bool
	spec      *v1alpha1.ChunkingPolicySpec
}

// formatVariants: plain text extraction with the default policy,
// parentrag's Markdown with recursive parents, and parentrag's Markdown
// with section parents; parents of 1500 and children of 300 characters
// in each.
var formatVariants = []formatVariant{
	{"raw text, recursive parents", false, &v1alpha1.ChunkingPolicySpec{}},
	{"Markdown, recursive parents", true, &v1alpha1.ChunkingPolicySpec{Separators: &v1alpha1.Separators{Preset: v1alpha1.SeparatorsMarkdown}}},
	{"Markdown, section parents", true, &v1alpha1.ChunkingPolicySpec{Separators: &v1alpha1.Separators{Preset: v1alpha1.SeparatorsMarkdown},
		Parent: &v1alpha1.ChunkSize{ChunkSize: 1500, Boundaries: v1alpha1.BoundariesSections}}},
}

// TestStructureAwareParentsAnswerManualQuestions evaluates every variant
// of every set with the three strategies and prints the table of
// docs/formats.md. Section parents must answer at least as many
// questions as every other variant and strategy at 400 and 800 words.
func TestStructureAwareParentsAnswerManualQuestions(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes two manuals nine times (-short)")
	}
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	budgets := []int{100, 200, 400, 800}
	for _, set := range formatSets {
		t.Run(set.name, func(t *testing.T) {
			queries, err := LoadQueries(filepath.Join(root, "test", "formats", set.queries))
			if err != nil {
				t.Fatal(err)
			}
			var qrels Qrels
			if set.qrels != "" {
				if qrels, err = LoadQrels(filepath.Join(root, "test", "formats", set.qrels)); err != nil {
					t.Fatal(err)
				}
			}
			files := set.files(t)
			best := map[int]float64{}
			var sections Report
			for _, v := range formatVariants {
				corpus := formatCorpus(t, set, files, v.converted)
				checkAnswerable(t, corpus, queries)
				for _, r := range evaluateVariant(t, corpus, queries, qrels, v.spec, budgets) {
					t.Logf("| %s | %s | %s |", v.name, r.Strategy, formatScores(r, budgets))
					if v.name == formatVariants[2].name && r.Strategy == ParentChild {
						sections = r
						continue
					}
					for _, b := range budgets {
						best[b] = max(best[b], r.AnswerInContext[fmt.Sprint(b)])
					}
				}
			}
			for _, b := range []int{400, 800} {
				if got := sections.AnswerInContext[fmt.Sprint(b)]; got < best[b] {
					t.Errorf("section parents answer %.3f at %d words, below %.3f", got, b, best[b])
				}
			}
		})
	}
}

// formatCorpus reads the set's files as a corpus: parentrag's documents,
// or the reference extractor's text.
func formatCorpus(t *testing.T, set formatSet, files map[string]string, converted bool) *Corpus {
	t.Helper()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	c := &Corpus{paragraphs: map[string][]paragraph{}}
	for _, p := range paths {
		if !converted {
			c.Docs = append(c.Docs, hierarchy.Document{ID: files[p], Text: set.raw(t, p)})
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := document.Read(document.Detect(p, data), p, files[p], data)
		if err != nil {
			t.Fatal(err)
		}
		c.Docs = append(c.Docs, docs...)
	}
	return c
}

// checkAnswerable fails the test for a question whose answers the corpus
// does not hold: it could not be answered by any variant.
func checkAnswerable(t *testing.T, c *Corpus, queries []Query) {
	t.Helper()
	var all strings.Builder
	for _, d := range c.Docs {
		all.WriteString(strings.Join(strings.Fields(d.Text), " "))
		all.WriteString(" ")
	}
	for _, q := range queries {
		if !containsAnswer(all.String(), q.Answers) {
			t.Errorf("%s: no answer of %q occurs in the corpus", q.ID, q.Text)
		}
	}
}

// evaluateVariant runs the three strategies with the policy spec.
func evaluateVariant(t *testing.T, c *Corpus, queries []Query, qrels Qrels, spec *v1alpha1.ChunkingPolicySpec, budgets []int) []Report {
	t.Helper()
	compiled, err := policy.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	reports, err := Run(context.Background(), c, queries, qrels, []string{FlatChild, FlatParent, ParentChild}, lexicalConfig(compiled.Builder, budgets))
	if err != nil {
		t.Fatal(err)
	}
	return reports
}

// formatScores is a report's answer-in-context at each budget, and its
// hit@1 when it was judged.
func formatScores(r Report, budgets []int) string {
	var cells []string
	if r.Hit1 != nil {
		cells = append(cells, fmt.Sprintf("%.3f", *r.Hit1))
	} else {
		cells = append(cells, "")
	}
	for _, b := range budgets {
		cells = append(cells, fmt.Sprintf("%.3f", r.AnswerInContext[fmt.Sprint(b)]))
	}
	return strings.Join(cells, " | ")
}
