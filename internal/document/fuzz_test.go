package document_test

import (
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/document"
	dt "github.com/parentrag/parentrag/internal/document/documenttest"
)

// fuzzLimits keep a fuzzed input small and quick.
var fuzzLimits = func() document.Limits {
	l := document.DefaultLimits
	l.MaxPages, l.MaxPageChars, l.PDFTimeout = 50, 100_000, 10*time.Second
	return l
}()

// FuzzReadHTML reads any bytes as HTML: it returns a document or an
// error, never panics, and its text stays within the limit.
func FuzzReadHTML(f *testing.F) {
	f.Add([]byte(sitePage))
	f.Add([]byte("<table><tr><td><ul><li><pre>x</pre></ul></table>"))
	f.Add([]byte("<!DOCTYPE html [<!ENTITY a 'b'>]><p>&a;</p>"))
	f.Fuzz(func(t *testing.T, page []byte) {
		docs, err := fuzzLimits.Read(document.HTML, "f.html", "f", page)
		if err == nil && len(docs[0].Text) > fuzzLimits.MaxTextBytes+1 {
			t.Fatalf("text of %d bytes", len(docs[0].Text))
		}
	})
}

// FuzzReadPDF reads any bytes as a PDF: it returns a document or an
// error, never panics or hangs, and a document's page starts lie within
// its text, in order.
func FuzzReadPDF(f *testing.F) {
	f.Add(dt.TextPDF(f, []string{"# heading", "line"}, []string{"second page"}))
	f.Add(dt.RawPDF(3, func(i int) string { return dt.TextStream("x", "y") }))
	f.Add(dt.Manual(f, dt.ManualOptions{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := fuzzLimits.Read(document.PDF, "f.pdf", "f", data)
		if err != nil {
			return
		}
		starts, n := docs[0].PageStarts, len([]rune(docs[0].Text))
		for i, s := range starts {
			if s < 0 || s > n || i > 0 && s < starts[i-1] {
				t.Fatalf("page starts %v in a text of %d code points", starts, n)
			}
		}
	})
}

// FuzzReadDOCX reads any bytes as a Word document.
func FuzzReadDOCX(f *testing.F) {
	f.Add(wordDocumentOf(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzLimits.Read(document.DOCX, "f.docx", "f", data)
	})
}
