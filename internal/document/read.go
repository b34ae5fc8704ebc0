package document

import (
	"bytes"
	"fmt"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
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
	doc, err := l.readOne(f, name, data)
	if err != nil {
		return nil, &FileError{Path: name, Err: err}
	}
	doc.ID = id
	return []hierarchy.Document{doc}, nil
}

// readOne reads a file of any format but JSON Lines as one document
// without its id. The converted formats (HTML, PDF, DOCX) record their
// format in the document's metadata, and source code its language, so
// that a policy can choose their splitters; the text formats record
// nothing, as they always have.
func (l Limits) readOne(f Format, name string, data []byte) (hierarchy.Document, error) {
	var doc hierarchy.Document
	var err error
	switch f {
	case HTML:
		doc, err = l.readHTML(data)
	case PDF:
		doc, err = l.readPDF(data)
	case DOCX:
		doc, err = l.readDOCX(data)
	default:
		return readText(f, name, data)
	}
	if err != nil {
		return hierarchy.Document{}, err
	}
	doc.Metadata = map[string]string{hierarchy.MetaFormat: string(f)}
	return doc, nil
}

// readText reads a text format: UTF-8, a leading byte-order mark dropped,
// titled as the format titles (source code never is, and says its
// language).
func readText(f Format, name string, data []byte) (hierarchy.Document, error) {
	text, err := plainText(data)
	if err != nil {
		return hierarchy.Document{}, err
	}
	if f == Code {
		lang := split.DetectLanguage(name, text)
		return hierarchy.Document{Text: text, Metadata: map[string]string{hierarchy.MetaLanguage: string(lang)}}, nil
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

// textTooLong is the error of converted text over limit bytes
// (Limits.MaxTextBytes).
func textTooLong(limit int) error {
	return fmt.Errorf("converted text is over %d bytes (the limit per document)", limit)
}
