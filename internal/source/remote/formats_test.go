package remote

import (
	"strings"
	"testing"

	dt "github.com/parentrag/parentrag/internal/document/documenttest"
)

// TestArchiveOfHTMLPDFAndDOCX fetches an archive holding a documentation
// page, a PDF manual, a Word document and a broken PDF: the first three
// are documents in Markdown (the PDF with its pages), the broken one a
// document error with its reason, and the rest is read.
func TestArchiveOfHTMLPDFAndDOCX(t *testing.T) {
	manual := dt.Manual(t, dt.ManualOptions{})
	docx := dt.DOCX(t, dt.DOCXPart{Name: "word/document.xml", Data: dt.DOCXBody(dt.Para("", "Word text."))})
	archive := tarGz(t, []tarFile{
		{Name: "site/proxy.html", Body: "<html><head><title>Proxy</title></head><body><nav>Menu</nav><main><h1>Proxy</h1><p>Forwards requests.</p></main></body></html>"},
		{Name: "manual.pdf", Body: string(manual)},
		{Name: "notes.docx", Body: string(docx)},
		{Name: "broken.pdf", Body: string(manual[:len(manual)/3])},
		{Name: "logo.png", Body: "\x89PNG"},
	})
	srv, _ := serveBody(t, archive, "application/gzip")
	res := fetchOK(t, "docs", Spec{URL: srv.URL + "/docs.tar.gz", Include: []string{"**/*"}})
	if got := strings.Join(ids(res.Documents), " "); got != "docs/manual.pdf docs/notes.docx docs/site/proxy.html" {
		t.Fatalf("documents %s", got)
	}
	html, pdf, word := res.Documents[2], res.Documents[0], res.Documents[1]
	if html.Title != "Proxy" || html.Text != "# Proxy\n\nForwards requests.\n" {
		t.Errorf("HTML read as %q %q", html.Title, html.Text)
	}
	if pdf.Title != dt.ManualTitle || len(pdf.PageStarts) != 5 || !strings.Contains(pdf.Text, "## 4.2 Configuring the proxy") {
		t.Errorf("PDF read as %q with %d pages", pdf.Title, len(pdf.PageStarts))
	}
	if word.Text != "Word text.\n" || word.Title != "notes.docx" {
		t.Errorf("DOCX read as %q %q", word.Title, word.Text)
	}
	wantContains(t, errorFor(t, res, "docs/broken.pdf").Message, "truncated")
	wantContains(t, errorFor(t, res, "docs/logo.png").Message, "unsupported file type .png")
}

// TestSingleWordDocumentIsNotUnpacked fetches a .docx, a zip archive, as
// the one document it is.
func TestSingleWordDocumentIsNotUnpacked(t *testing.T) {
	docx := dt.DOCX(t, dt.DOCXPart{Name: "word/document.xml", Data: dt.DOCXBody(dt.Para("Heading1", "Guide") + dt.Para("", "Body."))})
	srv, _ := serveBody(t, docx, "application/octet-stream")
	res := fetchOK(t, "w", Spec{URL: srv.URL + "/files/guide.docx"})
	if len(res.Documents) != 1 || res.Documents[0].ID != "w/guide.docx" || !strings.Contains(res.Documents[0].Text, "Body.") || len(res.Errors) != 0 {
		t.Fatalf("documents %+v errors %v, want guide.docx alone", res.Documents, res.Errors)
	}
}

// TestSinglePageByContentType fetches an HTML page whose URL has no
// extension.
func TestSinglePageByContentType(t *testing.T) {
	srv, _ := serveBody(t, []byte("<p>Plain paragraph.</p>"), "text/html; charset=utf-8")
	res := fetchOK(t, "p", Spec{URL: srv.URL + "/guide/page"})
	if len(res.Documents) != 1 || res.Documents[0].Text != "Plain paragraph.\n" {
		t.Fatalf("documents %+v errors %v", res.Documents, res.Errors)
	}
}

// TestDefaultIncludeReadsEveryFormat checks that an archive without an
// include reads the new formats.
func TestDefaultIncludeReadsEveryFormat(t *testing.T) {
	for _, g := range []string{"**/*.html", "**/*.htm", "**/*.xhtml", "**/*.pdf", "**/*.docx", "**/*.md"} {
		if !strings.Contains(strings.Join(DefaultInclude(), " "), g) {
			t.Errorf("default include %v lacks %s", DefaultInclude(), g)
		}
	}
}

// TestArchiveOfSourceCode reads code in an archive with its language.
func TestArchiveOfSourceCode(t *testing.T) {
	srv, _ := serveBody(t, tarGz(t, regular("cmd/main.go", "package main\n\nfunc main() {}\n", "tool.py", "import sys\n")), "")
	res := fetchOK(t, "repo", Spec{URL: srv.URL + "/repo.tar.gz"})
	if len(res.Documents) != 2 || res.Documents[0].Metadata["language"] != "go" || res.Documents[1].Metadata["language"] != "python" {
		t.Fatalf("documents %+v errors %v, want main.go in go and tool.py in python", res.Documents, res.Errors)
	}
}
