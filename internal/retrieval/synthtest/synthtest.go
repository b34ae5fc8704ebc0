// Package synthtest generates deterministic English-like corpora for
// tests and benchmarks: pseudo-words with Zipf-distributed frequencies,
// sentences, paragraphs and titled documents.
package synthtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// Vocabulary returns n distinct pronounceable pseudo-words, the same
// ones on every call: consonant-vowel syllables, two to four of them.
func Vocabulary(n int) []string {
	consonants := []string{"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"}
	vowels := []string{"a", "e", "i", "o", "u"}
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(consonants[r.IntN(len(consonants))])
			b.WriteString(vowels[r.IntN(len(vowels))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Corpus draws words from a vocabulary with Zipf-distributed ranks,
// deterministically from its seed, as English-like text.
type Corpus struct {
	vocab []string
	r     *rand.Rand
	zipf  *rand.Zipf
}

// New returns a generator over a vocabulary of vocabSize words.
func New(seed uint64, vocabSize int) *Corpus {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return &Corpus{
		vocab: Vocabulary(vocabSize),
		r:     r,
		zipf:  rand.NewZipf(r, 1.07, 2, uint64(vocabSize-1)),
	}
}

// Word returns one Zipf-distributed word.
func (s *Corpus) Word() string { return s.vocab[s.zipf.Uint64()] }

// Sentence returns 6 to 19 words, capitalised and ending in a full stop.
func (s *Corpus) Sentence() string {
	n := 6 + s.r.IntN(14)
	words := make([]string, n)
	for i := range words {
		words[i] = s.Word()
	}
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	return strings.Join(words, " ") + "."
}

// Paragraph returns 2 to 6 sentences.
func (s *Corpus) Paragraph() string {
	n := 2 + s.r.IntN(5)
	sents := make([]string, n)
	for i := range sents {
		sents[i] = s.Sentence()
	}
	return strings.Join(sents, " ")
}

// Document returns a titled document of the given number of paragraphs.
func (s *Corpus) Document(id string, paragraphs int) hierarchy.Document {
	paras := make([]string, paragraphs)
	for i := range paras {
		paras[i] = s.Paragraph()
	}
	title := s.Word() + " " + s.Word()
	return hierarchy.Document{ID: id, Title: title, Text: "# " + title + "\n\n" + strings.Join(paras, "\n\n")}
}

// Documents returns n documents of 3 to 8 paragraphs.
func (s *Corpus) Documents(n int) []hierarchy.Document {
	docs := make([]hierarchy.Document, n)
	for i := range docs {
		docs[i] = s.Document(fmt.Sprintf("doc-%05d", i), 3+s.r.IntN(6))
	}
	return docs
}

// BenchDocuments returns the first documents of the benchmarks'
// synthetic corpus (seed 21, 20,000 words; ids doc-0000000, doc-0000001,
// ...; 3 to 8 paragraphs in turn) that hold at least size bytes of text,
// and how many bytes they hold: every benchmark that reports MB/s builds
// a prefix of the same corpus.
func BenchDocuments(size int) ([]hierarchy.Document, int) {
	s := New(21, 20000)
	var docs []hierarchy.Document
	n := 0
	for n < size {
		d := s.Document(fmt.Sprintf("doc-%07d", len(docs)), 3+len(docs)%6)
		docs, n = append(docs, d), n+len(d.Text)
	}
	return docs, n
}

// BenchDocumentsOfEnv returns BenchDocuments of the number of megabytes
// of text PARENTRAG_BENCH_MB gives (defaultMB without it), failing tb on
// a value that is not a number: the size a benchmark of the synthetic
// corpus is run at.
func BenchDocumentsOfEnv(tb testing.TB, defaultMB float64) ([]hierarchy.Document, int) {
	tb.Helper()
	mb := defaultMB
	if v := os.Getenv("PARENTRAG_BENCH_MB"); v != "" {
		var err error
		if mb, err = strconv.ParseFloat(v, 64); err != nil {
			tb.Fatalf("PARENTRAG_BENCH_MB=%q: %v", v, err)
		}
	}
	return BenchDocuments(int(mb * 1e6))
}

// Query returns between minWords and maxWords words drawn from the
// vocabulary's head and body, as a user would type them.
func (s *Corpus) Query(minWords, maxWords int) string {
	n := minWords + s.r.IntN(maxWords-minWords+1)
	words := make([]string, n)
	for i := range words {
		words[i] = s.vocab[s.r.IntN(len(s.vocab)/4)]
	}
	return strings.Join(words, " ")
}

// Questions returns n questions of 4 to 8 words drawn with the corpus's
// own Zipf law, so frequent words (long posting lists) are as common as in
// its text. They are the same for the same vocabulary on every call,
// whatever else was drawn from s.
func (s *Corpus) Questions(n int) []string {
	r := rand.New(rand.NewPCG(99, 100))
	z := rand.NewZipf(r, 1.07, 2, uint64(len(s.vocab)-1))
	out := make([]string, n)
	for i := range out {
		words := make([]string, 4+r.IntN(5))
		for j := range words {
			words[j] = s.vocab[z.Uint64()]
		}
		out[i] = strings.Join(words, " ")
	}
	return out
}

// Vocab returns the corpus's vocabulary, most frequent word first.
func (s *Corpus) Vocab() []string { return s.vocab }
