package remote

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/source"
)

// jsonDocument is one line of a JSON Lines file: a hierarchy.Document,
// with "_id" accepted for "id" as in the BEIR layout internal/source reads.
type jsonDocument struct {
	ID       string            `json:"id"`
	BEIRID   string            `json:"_id"`
	Title    string            `json:"title"`
	Text     *string           `json:"text"`
	Metadata map[string]string `json:"metadata"`
}

// addJSONLines adds the documents of a JSON Lines file, each with the id
// "<source name>/<its id>". A file with a bad line is refused as a whole,
// naming the line, as internal/source refuses it; duplicate ids are
// refused one by one.
func (c *collector) addJSONLines(p string, data []byte) {
	var docs []hierarchy.Document
	err := source.EachJSONLine(p, data, func(raw []byte) error {
		d, err := parseJSONDocument(raw)
		docs = append(docs, d)
		return err
	})
	if err != nil {
		c.reject(p, jsonLinesMessage(err))
		return
	}
	for _, d := range docs {
		d.ID = c.id(d.ID)
		c.add(p, d)
	}
}

// documentKeys are the string members of a jsonDocument, in the order of
// source.DecodeFlatLine's values.
var documentKeys = []string{"id", "_id", "title", "text"}

// parseJSONDocument reads one line; it needs an id and a text.
func parseJSONDocument(raw []byte) (hierarchy.Document, error) {
	d, err := decodeJSONDocument(raw)
	if err != nil {
		return hierarchy.Document{}, fmt.Errorf("not a JSON document object: %w", err)
	}
	id := d.ID
	if id == "" {
		id = d.BEIRID
	}
	if id == "" || d.Text == nil {
		return hierarchy.Document{}, errors.New(`a document needs "id" (or "_id") and "text"`)
	}
	return hierarchy.Document{ID: id, Title: d.Title, Text: *d.Text, Metadata: d.Metadata}, nil
}

// decodeJSONDocument decodes a line of the usual shape by
// source.DecodeFlatLine, and any other by encoding/json, to the same
// jsonDocument.
func decodeJSONDocument(raw []byte) (jsonDocument, error) {
	if line, ok := source.DecodeFlatLine(raw, documentKeys); ok {
		return jsonDocument{ID: line.Values[0], BEIRID: line.Values[1], Title: line.Values[2], Text: line.ValueOrNil(3), Metadata: line.Metadata}, nil
	}
	var d jsonDocument
	err := json.Unmarshal(raw, &d)
	return d, err
}

// jsonLinesMessage names the line of a JSON Lines error without the path,
// which the DocumentError already names.
func jsonLinesMessage(err error) string {
	var fe *source.FileError
	if !errors.As(err, &fe) {
		return err.Error()
	}
	if fe.Line > 0 {
		return fmt.Sprintf("line %d: %v", fe.Line, fe.Err)
	}
	return fe.Err.Error()
}
