package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// GoldenQuery is a query with what counts as answering it.
type GoldenQuery struct {
	// Query is the text asked.
	Query string `json:"query"`
	// DocIDs: a hit if any returned parent comes from one of these
	// documents.
	DocIDs []string `json:"docIds,omitempty"`
	// Answers: a hit if any returned parent's text contains one of these,
	// case-insensitively and with white space normalised.
	Answers []string `json:"answers,omitempty"`
}

// ParseGolden reads golden queries from JSON Lines (one object per line;
// blank lines and lines starting with # are ignored) or from a JSON array
// (when the data starts with '['). Every query needs a non-empty query and
// at least one docId or answer, none of them empty. Unknown fields are an
// error, so that a misspelt field cannot silently make a gate pass, and so
// is an empty set. Errors name the line (or the array index) and say what
// is wrong.
func ParseGolden(data []byte) ([]GoldenQuery, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var (
		queries []GoldenQuery
		err     error
	)
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		queries, err = parseGoldenArray(trimmed)
	} else {
		queries, err = parseGoldenLines(data)
	}
	if err != nil {
		return nil, err
	}
	if len(queries) == 0 {
		return nil, errors.New("no golden queries: give one JSON object per line or a JSON array of them")
	}
	return queries, nil
}

// parseGoldenLines reads one query per line, skipping blank and comment
// lines; an error names the 1-based line.
func parseGoldenLines(data []byte) ([]GoldenQuery, error) {
	var out []GoldenQuery
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		q, err := decodeGolden(line)
		if err != nil {
			return nil, fmt.Errorf("golden queries line %d: %w", i+1, err)
		}
		out = append(out, q)
	}
	return out, nil
}

// parseGoldenArray reads a JSON array of queries; an error names the
// 0-based index of the element.
func parseGoldenArray(data []byte) ([]GoldenQuery, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("golden queries: %w", err)
	}
	out := make([]GoldenQuery, len(raws))
	for i, raw := range raws {
		q, err := decodeGolden(raw)
		if err != nil {
			return nil, fmt.Errorf("golden queries array index %d: %w", i, err)
		}
		out[i] = q
	}
	return out, nil
}

// decodeGolden decodes exactly one query object, refusing unknown fields
// and anything after the object, and validates it.
func decodeGolden(raw []byte) (GoldenQuery, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var q GoldenQuery
	if err := dec.Decode(&q); err != nil {
		return GoldenQuery{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return GoldenQuery{}, errors.New("unexpected data after the query object")
	}
	return q, q.validate()
}

// validate fails unless the query has text and at least one expectation,
// none of them empty: an empty answer would be found in every parent.
func (q GoldenQuery) validate() error {
	if strings.TrimSpace(q.Query) == "" {
		return errors.New("query is empty")
	}
	if len(q.DocIDs) == 0 && len(q.Answers) == 0 {
		return fmt.Errorf("query %q has neither docIds nor answers, so no result could count as a hit", q.Query)
	}
	for i, id := range q.DocIDs {
		if strings.TrimSpace(id) == "" {
			return fmt.Errorf("query %q: docIds[%d] is empty", q.Query, i)
		}
	}
	for i, a := range q.Answers {
		if normalize(a) == "" {
			return fmt.Errorf("query %q: answers[%d] is empty", q.Query, i)
		}
	}
	return nil
}
