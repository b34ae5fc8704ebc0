package document

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// JSONDocument is one line of a JSON Lines corpus, in the shape of BEIR's
// corpus.jsonl; "id" names a document as "_id" does.
type JSONDocument struct {
	ID       string            `json:"id,omitempty"`
	BEIRID   string            `json:"_id,omitempty"`
	Title    string            `json:"title"`
	Text     *string           `json:"text"`
	Metadata map[string]string `json:"metadata"`
}

// jsonDocumentKeys are JSONDocument's string members, in the order of
// the values DecodeFlatLine returns for them.
var jsonDocumentKeys = []string{"id", "_id", "title", "text"}

// DecodeJSONDocument decodes one line as encoding/json decodes it into a
// JSONDocument, errors included; a line of the usual shape is read by
// DecodeFlatLine, about six times faster.
func DecodeJSONDocument(raw []byte) (JSONDocument, error) {
	if line, ok := DecodeFlatLine(raw, jsonDocumentKeys); ok {
		return JSONDocument{ID: line.Values[0], BEIRID: line.Values[1], Title: line.Values[2], Text: line.ValueOrNil(3), Metadata: line.Metadata}, nil
	}
	var d JSONDocument
	err := json.Unmarshal(raw, &d)
	return d, err
}

// ParseJSONDocument reads one line of a JSON Lines corpus as a document;
// it needs an id ("id", or else "_id") and a text.
func ParseJSONDocument(raw []byte) (hierarchy.Document, error) {
	d, err := DecodeJSONDocument(raw)
	if err != nil {
		return hierarchy.Document{}, fmt.Errorf("not a JSON document object: %w", err)
	}
	return d.Document()
}

// Document is d as a document, when it has an id and a text: its "id",
// or else its "_id".
func (d JSONDocument) Document() (hierarchy.Document, error) {
	id := d.ID
	if id == "" {
		id = d.BEIRID
	}
	if id == "" || d.Text == nil {
		return hierarchy.Document{}, errors.New(`a document needs "id" (or "_id") and "text"`)
	}
	return hierarchy.Document{ID: id, Title: d.Title, Text: *d.Text, Metadata: d.Metadata}, nil
}
