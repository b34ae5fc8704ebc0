package document

import (
	"bytes"
	"fmt"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// Limits bound what reading one file may cost; a file over any of them is
// refused with an error that names the limit. DefaultLimits holds the
// values every source uses.
type Limits struct {
	// MaxTextBytes bounds the text one HTML, PDF or DOCX file converts to.
	MaxTextBytes int
	// MaxHTMLBytes bounds an HTML file.
	MaxHTMLBytes int
	// MaxDepth bounds how deeply the elements of an HTML page or the XML
	// of a Word document nest.
	MaxDepth int
	// MaxPages bounds the pages of a PDF.
	MaxPages int
	// MaxPageChars bounds the characters of one PDF page.
	MaxPageChars int
	// PDFTimeout bounds the time spent reading one PDF.
	PDFTimeout time.Duration
	// MaxXMLBytes bounds each XML part of a Word document, unpacked.
	MaxXMLBytes int64
}

// DefaultLimits are the limits of every source.
var DefaultLimits = Limits{
	MaxTextBytes: 64 << 20,
	MaxHTMLBytes: 32 << 20,
	MaxDepth:     512,
	MaxPages:     10_000,
	MaxPageChars: 1 << 20,
	PDFTimeout:   2 * time.Minute,
	MaxXMLBytes:  64 << 20,
}

// Read reads data, the file called name, in format f as documents with
// the given id (a JSON Lines file names its own), with DefaultLimits.
func Read(f Format, name, id string, data []byte) ([]hierarchy.Document, error) {
	return DefaultLimits.Read(f, name, id, data)
}

// Read reads data, the file called name, in format f as documents with
// the given id (a JSON Lines file names its own), within l. Errors are
// *FileError naming the file. Text formats must be UTF-8 (a leading
// byte-order mark is dropped); an Unknown format is read as Markdown
// when it is text, and refused as binary otherwise.
func (l Limits) Read(f Format, name, id string, data []byte) ([]hierarchy.Document, error) {
	if f == JSONLines {
		return ReadJSONLines(bytes.NewReader(data), name)
	}
	doc, err := l.readOne(f, data)
	if err != nil {
		return nil, &FileError{Path: name, Err: err}
	}
	doc.ID = id
	return []hierarchy.Document{doc}, nil
}

// readOne reads a file of any format but JSON Lines as one document
// without its id.
func (l Limits) readOne(f Format, data []byte) (hierarchy.Document, error) {
	switch f {
	case HTML:
		return l.readHTML(data)
	case PDF:
		return l.readPDF(data)
	case DOCX:
		return l.readDOCX(data)
	}
	text, err := plainText(data)
	if err != nil {
		return hierarchy.Document{}, err
	}
	return hierarchy.Document{Title: textTitle(f, text), Text: text}, nil
}

// textTitle is the title a text format gives a document: Markdown's (and
// an unknown text's) first level-one heading, reStructuredText's first
// section title, none for plain text.
func textTitle(f Format, text string) string {
	switch f {
	case PlainText:
		return ""
	case RST:
		return rstTitle(text)
	}
	return MarkdownTitle(text)
}

// tooLong is the error of converted text over MaxTextBytes.
func (l Limits) tooLong() error {
	return fmt.Errorf("converted text is over %d bytes (the limit per document)", l.MaxTextBytes)
}
