package serveload

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/eval/evaltest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
	"github.com/parentrag/parentrag/internal/sharedtest"
)

// EnvQuestionsSet chooses the corpus and questions of
// BenchmarkServeQuestions: "synthetic" (the default) or "squad-qasper",
// the SQuAD and QASPER documents repeated to the size asked for, asked
// their own questions.
const EnvQuestionsSet = "PARENTRAG_QUESTIONS_SET"

// maxQuestions bounds the questions a run draws from.
const maxQuestions = 2000

// corpusAndQuestions returns the documents of the set EnvQuestionsSet
// names, about size bytes of text, and request bodies of questions.
func corpusAndQuestions(b *testing.B, size int) ([]hierarchy.Document, [][]byte) {
	switch set := os.Getenv(EnvQuestionsSet); set {
	case "", "synthetic":
		return syntheticSet(size)
	case "squad-qasper":
		return sharedSets(b, size)
	default:
		b.Fatalf("%s=%q: want synthetic or squad-qasper", EnvQuestionsSet, set)
		return nil, nil
	}
}

// syntheticSet is the synthetic corpus and questions of 5 to 9
// consecutive words of its sentences.
func syntheticSet(size int) ([]hierarchy.Document, [][]byte) {
	docs, _ := synthtest.BenchDocuments(size)
	r := rand.New(rand.NewPCG(5, 6))
	var questions [][]byte
	for _, d := range docs {
		if len(questions) < maxQuestions && r.IntN(len(docs)/maxQuestions+1) == 0 {
			questions = append(questions, questionOf(r, d.Text))
		}
	}
	return docs, questions
}

// sharedSets is the SQuAD v1.1 dev articles and the QASPER papers,
// repeated (each copy's ids suffixed) until they hold size bytes of text,
// and their questions as people wrote them.
func sharedSets(b *testing.B, size int) ([]hierarchy.Document, [][]byte) {
	var base []hierarchy.Document
	var questions [][]byte
	for _, set := range []struct{ dir, corpus string }{
		{"squad-v1.1-dev", "articles.jsonl.gz"},
		{"qasper-v0.3-test", "corpus.jsonl.gz"},
	} {
		corpus, queries, err := evaltest.LoadSet(sharedtest.Dir(b, "eval", set.dir), set.corpus)
		if err != nil {
			b.Fatal(err)
		}
		base = append(base, corpus.Docs...)
		for i := 0; i < len(queries) && len(questions) < maxQuestions; i += max(1, len(queries)/(maxQuestions/2)) {
			questions = append(questions, questionBody(queries[i].Text))
		}
	}
	var docs []hierarchy.Document
	for copyN, total := 0, 0; total < size; copyN++ {
		for _, d := range base {
			d.ID = fmt.Sprintf("%s#%d", d.ID, copyN)
			docs = append(docs, d)
			total += len(d.Text)
		}
	}
	return docs, questions
}

// questionBody is the request body of one question.
func questionBody(q string) []byte {
	return []byte(fmt.Sprintf(`{"query":%q}`, strings.TrimSpace(q)))
}
