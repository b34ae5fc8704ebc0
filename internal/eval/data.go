// Package eval scores retrieval strategies on a corpus with questions:
// ranking metrics against relevance judgements (BEIR style) and
// answer-in-context at fixed word budgets.
package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/document"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/source"
)

// Query is one question, with every accepted answer string and the
// evidence paragraphs that support an answer, when the data set has them.
type Query struct {
	ID       string
	Text     string
	Answers  []string
	Evidence []string
}

// Qrels maps a query id to the ids judged relevant to it.
type Qrels map[string]map[string]bool

// Corpus is the documents of an evaluation and, for documents made of
// paragraphs (`paragraph_ids`), where each paragraph lies, so returned
// units can be judged against paragraph-level relevance.
type Corpus struct {
	Docs       []hierarchy.Document
	paragraphs map[string][]paragraph // doc id -> paragraphs in order
}

// paragraph is a judged sub-unit of a document: [start, end) code points.
type paragraph struct {
	id         string
	start, end int
}

// LoadCorpus reads a JSON Lines corpus (`_id`, `title`, `text`, optional
// `paragraph_ids`; gzip when the name ends in .gz), or a folder or another
// file read as `parentrag local index` reads them (HTML, PDF, Markdown...,
// each document judged as a whole). When paragraph_ids are given, text must
// be those paragraphs joined by a blank line.
func LoadCorpus(path string) (*Corpus, error) {
	if !isJSONLines(path) {
		docs, err := source.LoadPaths([]string{path})
		if err != nil {
			return nil, err
		}
		return &Corpus{Docs: docs, paragraphs: map[string][]paragraph{}}, nil
	}
	docs, err := source.LoadFile(path, "")
	if err != nil {
		return nil, err
	}
	c := &Corpus{Docs: docs, paragraphs: map[string][]paragraph{}}
	ids, err := readParagraphIDs(path)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		if pids, ok := ids[d.ID]; ok {
			paras, err := locateParagraphs(d.Text, pids)
			if err != nil {
				return nil, fmt.Errorf("%s: document %s: %w", path, d.ID, err)
			}
			c.paragraphs[d.ID] = paras
		}
	}
	return c, nil
}

// isJSONLines reports whether path names a JSON Lines file, gzipped or
// not.
func isJSONLines(path string) bool {
	return document.ByName(strings.TrimSuffix(strings.ToLower(path), ".gz")) == document.JSONLines
}

// readParagraphIDs returns the paragraph_ids of every document that has
// them.
func readParagraphIDs(path string) (map[string][]string, error) {
	out := map[string][]string{}
	err := eachJSONLine(path, func(line []byte) error {
		var rec struct {
			ID           string   `json:"_id"`
			ParagraphIDs []string `json:"paragraph_ids"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		if len(rec.ParagraphIDs) > 0 {
			out[rec.ID] = rec.ParagraphIDs
		}
		return nil
	})
	return out, err
}

// locateParagraphs splits text on blank lines and pairs the pieces with ids.
func locateParagraphs(text string, ids []string) ([]paragraph, error) {
	pieces := strings.Split(text, "\n\n")
	if len(pieces) != len(ids) {
		return nil, fmt.Errorf("%d paragraph_ids but %d paragraphs", len(ids), len(pieces))
	}
	out := make([]paragraph, len(ids))
	pos := 0
	for i, p := range pieces {
		n := utf8.RuneCountInString(p)
		out[i] = paragraph{id: ids[i], start: pos, end: pos + n}
		pos += n + 2
	}
	return out, nil
}

// LoadQueries reads a JSON Lines query file: `_id`, `text` and optional
// `metadata.answers` and `metadata.evidence` (blank entries are dropped).
func LoadQueries(path string) ([]Query, error) {
	var out []Query
	err := eachJSONLine(path, func(line []byte) error {
		var rec struct {
			ID       string `json:"_id"`
			Text     string `json:"text"`
			Metadata struct {
				Answers  []string `json:"answers"`
				Evidence []string `json:"evidence"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		if rec.ID == "" || rec.Text == "" {
			return fmt.Errorf(`a query needs "_id" and "text"`)
		}
		out = append(out, Query{ID: rec.ID, Text: rec.Text, Answers: rec.Metadata.Answers, Evidence: nonBlank(rec.Metadata.Evidence)})
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no queries", path)
	}
	return out, err
}

// nonBlank returns the entries of ss that hold more than white space.
func nonBlank(ss []string) []string {
	var out []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// LoadQrels reads a TSV of query-id, corpus-id and score with a header
// line; rows with a score above zero are relevant.
func LoadQrels(path string) (Qrels, error) {
	data, err := source.ReadFile(path)
	if err != nil {
		return nil, err
	}
	q := Qrels{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		fields := strings.Split(strings.TrimSpace(sc.Text()), "\t")
		if line == 1 && len(fields) > 0 && fields[0] == "query-id" {
			continue
		}
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s:%d: want query-id, corpus-id and score separated by tabs", path, line)
		}
		score, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: score %q is not an integer", path, line, fields[2])
		}
		if score > 0 {
			if q[fields[0]] == nil {
				q[fields[0]] = map[string]bool{}
			}
			q[fields[0]][fields[1]] = true
		}
	}
	return q, sc.Err()
}

// eachJSONLine calls fn with every non-blank line of a JSON Lines file,
// naming the file and line in any error.
func eachJSONLine(path string, fn func([]byte) error) error {
	data, err := source.ReadFile(path)
	if err != nil {
		return err
	}
	return document.EachJSONLine(path, data, fn)
}
