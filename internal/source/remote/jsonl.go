package remote

import (
	"errors"
	"fmt"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/source"
)

// addJSONLines adds the documents of a JSON Lines file, each with the id
// "<source name>/<its id>". A file with a bad line is refused as a whole,
// naming the line, as internal/source refuses it; duplicate ids are
// refused one by one.
func (c *collector) addJSONLines(p string, data []byte) {
	var docs []hierarchy.Document
	err := source.EachJSONLine(p, data, func(raw []byte) error {
		d, err := source.ParseJSONDocument(raw)
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
