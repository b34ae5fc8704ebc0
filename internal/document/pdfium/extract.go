package pdfium

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gopdfium "github.com/klippa-app/go-pdfium"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
)

// Limits bound the reading of one file.
type Limits struct {
	// MaxPages bounds the pages of a file.
	MaxPages int
	// MaxPageChars bounds the characters of one page.
	MaxPageChars int
	// MaxChars bounds the characters of the whole file.
	MaxChars int
	// Timeout bounds the time the reading takes, from the moment an
	// instance is free (compiling the module the first time and waiting
	// for another file are not counted).
	Timeout time.Duration
}

// Content is what a PDF holds as text.
type Content struct {
	// Title is the Title of the document information dictionary, or "".
	Title string
	// Pages holds each page's text, page 1 first, lines ending in "\n".
	Pages []string
	// Outline lists the bookmarks in document order.
	Outline []Bookmark
}

// Bookmark is an entry of a PDF's outline.
type Bookmark struct {
	Title string
	// Level is 1 for a top-level entry, 2 for its children, and so on.
	Level int
	// Page is the index (0 for page 1) of the page it points at, or -1.
	Page int
}

// ErrEncrypted is the error of a file that needs a password to open.
var ErrEncrypted = errors.New("encrypted: the PDF needs a password to open")

// Read reads data, a PDF file, within l: every page's text, the outline
// and the title. Errors say what is wrong with the file: not a PDF,
// damaged, encrypted (ErrEncrypted), over a limit, or over the memory
// PDFium may use.
func Read(data []byte, l Limits) (*Content, error) {
	inst, err := instance(context.Background())
	if err != nil {
		return nil, fmt.Errorf("starting PDFium: %w", err)
	}
	stop := killAfter(inst, l.Timeout)
	r := reader{inst: inst, limits: l}
	content, err := r.read(data)
	killed := stop()
	if !killed {
		inst.Close()
	}
	releaseMemory() // no call runs in the instance any more
	if killed {
		return nil, fmt.Errorf("reading took longer than %s (the limit per document)", l.Timeout)
	}
	if err != nil {
		return nil, explain(err)
	}
	return content, nil
}

// reader reads one file with one instance.
type reader struct {
	inst   gopdfium.Pdfium
	limits Limits
	doc    references.FPDF_DOCUMENT
	chars  int
}

// read opens the file and reads its title, outline and pages.
func (r *reader) read(data []byte) (*Content, error) {
	opened, err := r.inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		return nil, err
	}
	r.doc = opened.Document
	defer r.inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: r.doc})
	count, err := r.inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: r.doc})
	if err != nil {
		return nil, err
	}
	if count.PageCount > r.limits.MaxPages {
		return nil, fmt.Errorf("the PDF has %d pages, over the %d-page limit", count.PageCount, r.limits.MaxPages)
	}
	content := &Content{Title: r.title()}
	if content.Outline, err = r.outline(count.PageCount); err != nil {
		return nil, err
	}
	for i := 0; i < count.PageCount; i++ {
		text, err := r.page(i)
		if err != nil {
			return nil, err
		}
		content.Pages = append(content.Pages, text)
	}
	return content, nil
}

// title is the document's Title metadata, or "".
func (r *reader) title() string {
	meta, err := r.inst.FPDF_GetMetaText(&requests.FPDF_GetMetaText{Document: r.doc, Tag: "Title"})
	if err != nil {
		return ""
	}
	return strings.TrimSpace(meta.Value)
}

// page returns the text of the page at index i, its lines ending in "\n".
func (r *reader) page(i int) (string, error) {
	loaded, err := r.inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: requests.Page{ByIndex: &requests.PageByIndex{Document: r.doc, Index: i}}})
	if err != nil {
		return "", fmt.Errorf("page %d: %w", i+1, err)
	}
	defer r.inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: loaded.TextPage})
	count, err := r.inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: loaded.TextPage})
	if err != nil {
		return "", fmt.Errorf("page %d: %w", i+1, err)
	}
	if count.Count > r.limits.MaxPageChars {
		return "", fmt.Errorf("page %d has %d characters, over the %d-character limit per page", i+1, count.Count, r.limits.MaxPageChars)
	}
	if r.chars += count.Count; r.chars > r.limits.MaxChars {
		return "", fmt.Errorf("the PDF has over %d characters (the limit per document)", r.limits.MaxChars)
	}
	if count.Count <= 0 {
		return "", nil
	}
	text, err := r.inst.FPDFText_GetText(&requests.FPDFText_GetText{TextPage: loaded.TextPage, StartIndex: 0, Count: count.Count})
	if err != nil {
		return "", fmt.Errorf("page %d: %w", i+1, err)
	}
	return strings.ReplaceAll(strings.ReplaceAll(text.Text, "\r\n", "\n"), "\r", "\n"), nil
}

// explain turns PDFium's errors into what they mean for the file.
func explain(err error) error {
	switch {
	case errors.Is(err, pdfiumerrors.ErrPassword):
		return ErrEncrypted
	case errors.Is(err, pdfiumerrors.ErrFormat):
		return errors.New("not a PDF, or damaged beyond repair")
	case errors.Is(err, pdfiumerrors.ErrFile):
		return errors.New("not a PDF, or truncated")
	case errors.Is(err, pdfiumerrors.ErrSecurity):
		return errors.New("encrypted with an unsupported security handler")
	case strings.Contains(err.Error(), "wasm error"):
		msg, _, _ := strings.Cut(err.Error(), "\n") // not the stack trace
		return fmt.Errorf("PDFium stopped (%s): the file needs more than the %d MiB a document may use (the limit), or is damaged", msg, MemoryLimit>>20)
	}
	return err
}
