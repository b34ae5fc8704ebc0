// Package evaltest reads the evaluation sets tests share: a folder with a
// corpus file and its questions.
package evaltest

import (
	"path/filepath"

	"github.com/parentrag/parentrag/internal/eval"
)

// LoadSet reads an evaluation set's folder: its documents from corpusFile
// (see eval.LoadCorpus) and its questions from queries.jsonl.gz.
func LoadSet(dir, corpusFile string) (*eval.Corpus, []eval.Query, error) {
	corpus, err := eval.LoadCorpus(filepath.Join(dir, corpusFile))
	if err != nil {
		return nil, nil, err
	}
	queries, err := eval.LoadQueries(filepath.Join(dir, "queries.jsonl.gz"))
	if err != nil {
		return nil, nil, err
	}
	return corpus, queries, nil
}
