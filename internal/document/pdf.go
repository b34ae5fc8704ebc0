package document

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/parentrag/parentrag/internal/document/pdfium"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// readPDF reads a PDF as one document: its text layer page by page, with
// running headers, footers and page numbers dropped and words hyphenated
// at line ends joined (cleanPages), its outline as Markdown headings
// (layoutPages), and the offset of every page, so that parents know their
// pages. Its title is the Title of its metadata, else the first entry of
// its outline. A PDF without a text layer, or one that needs a password,
// is refused, and so is one that does not end in the %%EOF marker: cut
// short, it would be read up to where it breaks off.
func (l Limits) readPDF(data []byte) (hierarchy.Document, error) {
	if !bytes.Contains(data[:min(len(data), pdfMagicWindow)], []byte("%PDF-")) {
		return hierarchy.Document{}, fmt.Errorf("not a PDF (no %%PDF- header in its first %d bytes)", pdfMagicWindow)
	}
	if !bytes.Contains(data[max(0, len(data)-pdfMagicWindow):], []byte("%%EOF")) {
		return hierarchy.Document{}, fmt.Errorf("truncated: no %%%%EOF marker in the last %d bytes (an interrupted download or copy?)", pdfMagicWindow)
	}
	content, err := pdfium.Read(data, pdfium.Limits{
		MaxPages:     l.MaxPages,
		MaxPageChars: l.MaxPageChars,
		MaxChars:     l.MaxTextBytes,
		Timeout:      l.PDFTimeout,
	})
	if err != nil {
		return hierarchy.Document{}, err
	}
	pages := cleanPages(content.Pages)
	if !hasText(pages) {
		return hierarchy.Document{}, errNoTextLayer(len(pages))
	}
	text, starts := layoutPages(pages, content.Outline)
	return hierarchy.Document{Title: pdfTitle(content, pages), Text: text, PageStarts: starts}, nil
}

// maxTitleRunes bounds a title taken from a PDF's text.
const maxTitleRunes = 200

// pdfTitle is the Title of a PDF's metadata, else the first entry of its
// outline when that points at page 1, else the first line of text.
func pdfTitle(content *pdfium.Content, pages [][]string) string {
	if content.Title != "" {
		return content.Title
	}
	if len(content.Outline) > 0 && content.Outline[0].Page == 0 {
		return content.Outline[0].Title
	}
	for _, lines := range pages {
		for _, l := range lines {
			if strings.IndexFunc(l, isWordRune) >= 0 {
				return truncateRunes(collapse(l), maxTitleRunes)
			}
		}
	}
	return ""
}

// truncateRunes cuts s to at most n code points.
func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// hasText reports whether any line of any page holds a letter or digit.
func hasText(pages [][]string) bool {
	for _, lines := range pages {
		for _, l := range lines {
			if strings.IndexFunc(l, isWordRune) >= 0 {
				return true
			}
		}
	}
	return false
}

// errNoTextLayer is the error of a PDF whose pages hold no text.
func errNoTextLayer(pages int) error {
	if pages == 0 {
		return errors.New("the PDF has no pages")
	}
	return fmt.Errorf("no text layer: none of its %d pages holds text (scanned pages are images; run OCR on it first)", pages)
}
