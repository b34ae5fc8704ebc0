package document

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// The parts of a Word document that are read.
const (
	docxBody       = "word/document.xml"
	docxStylesPart = "word/styles.xml"
	docxNumbering  = "word/numbering.xml"
	docxCore       = "docProps/core.xml"
)

// isWordArchive reports whether data, a zip archive, holds a Word
// document's body.
func isWordArchive(data []byte) bool {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	return err == nil && IsWordZip(zr)
}

// IsWordZip reports whether a zip archive is a Word document: it holds
// word/document.xml.
func IsWordZip(zr *zip.Reader) bool { return findPart(zr, docxBody) != nil }

// readDOCX reads a Word document (Office Open XML) as one document: its
// body in Markdown, headings from the paragraph styles (Title, Heading 1
// to 9, or an outline level), list paragraphs as list items, tables as
// rows of cells; its title from the document's properties, else its first
// Title or heading paragraph. Each XML part is read up to MaxXMLBytes
// unpacked, so a zip bomb stops there; encoding/xml expands no entity a
// document type declares, so none can grow the text (an entity that is
// not XML's own is an error).
func (l Limits) readDOCX(data []byte) (hierarchy.Document, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return hierarchy.Document{}, fmt.Errorf("not a Word document (not a zip archive: %v)", err)
	}
	p := docxParts{zr: zr, limit: l.MaxXMLBytes}
	body, err := p.read(docxBody)
	if err != nil {
		return hierarchy.Document{}, err
	}
	if body == nil {
		return hierarchy.Document{}, errors.New("not a Word document (no word/document.xml in the zip archive)")
	}
	styles, err := p.styles()
	if err != nil {
		return hierarchy.Document{}, err
	}
	conv := newDocxConverter(styles, l)
	if err := conv.convert(body); err != nil {
		return hierarchy.Document{}, fmt.Errorf("%s: %w", docxBody, err)
	}
	title := p.coreTitle()
	if title == "" {
		title = conv.title
	}
	return hierarchy.Document{Title: title, Text: conv.markdown()}, nil
}

// docxParts reads the parts of one archive within a size limit.
type docxParts struct {
	zr    *zip.Reader
	limit int64
}

// read returns the unpacked bytes of the named part, nil when the archive
// has none, and an error past the limit or for a broken entry.
func (p docxParts) read(name string) ([]byte, error) {
	f := findPart(p.zr, name)
	if f == nil {
		return nil, nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, p.limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > p.limit {
		return nil, fmt.Errorf("%s unpacks to over %d bytes (the limit)", name, p.limit)
	}
	return data, nil
}

// styles reads the style and numbering parts; a document may have
// neither.
func (p docxParts) styles() (*docxStyles, error) {
	s := newDocxStyles()
	for _, part := range []struct {
		name string
		read func([]byte) error
	}{{docxStylesPart, s.readStyles}, {docxNumbering, s.readNumbering}} {
		data, err := p.read(part.name)
		if err != nil {
			return nil, err
		}
		if data == nil {
			continue
		}
		if err := part.read(data); err != nil {
			return nil, fmt.Errorf("%s: %w", part.name, err)
		}
	}
	return s, nil
}

// coreTitle is the dc:title of the document's core properties, or "".
func (p docxParts) coreTitle() string {
	data, err := p.read(docxCore)
	if err != nil || data == nil {
		return ""
	}
	var core struct {
		Title string `xml:"title"`
	}
	if xml.Unmarshal(data, &core) != nil {
		return ""
	}
	return collapse(core.Title)
}

// findPart returns the archive entry of the named part (names are
// compared without case, as Office does), or nil.
func findPart(zr *zip.Reader, name string) *zip.File {
	for _, f := range zr.File {
		if strings.EqualFold(strings.TrimPrefix(f.Name, "/"), name) {
			return f
		}
	}
	return nil
}
