package document_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/document"
	"github.com/parentrag/parentrag/internal/document/documenttest"
	"github.com/parentrag/parentrag/internal/document/pdfium"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// readPDF reads a PDF with the default limits, failing the test on an
// error.
func readPDF(t *testing.T, data []byte) hierarchy.Document {
	t.Helper()
	docs, err := document.Read(document.PDF, "manual.pdf", "manual.pdf", data)
	if err != nil {
		t.Fatal(err)
	}
	return docs[0]
}

// TestPDFManualBecomesSectionsAndPages checks the reading of a manual
// written by a PDF library: its metadata title, its outline as headings of
// their levels in order, the running header and the page footers gone, a
// word hyphenated at a line end joined, and page starts that put each
// heading on the page its bookmark points at.
func TestPDFManualBecomesSectionsAndPages(t *testing.T) {
	doc := readPDF(t, documenttest.Manual(t, documenttest.ManualOptions{}))
	if doc.Title != documenttest.ManualTitle {
		t.Errorf("title %q, want %q", doc.Title, documenttest.ManualTitle)
	}
	var want []string
	for _, s := range documenttest.ManualSections() {
		want = append(want, strings.Repeat("#", s.Level)+" "+s.Title)
	}
	if got := headingLines(doc.Text); !slices.Equal(got, want) {
		t.Errorf("headings\n%q\nwant\n%q", got, want)
	}
	for _, gone := range []string{documenttest.RunningHeader, "Page 1", "Page 2", "Page 3"} {
		if strings.Contains(doc.Text, gone) {
			t.Errorf("text still holds the running line %q", gone)
		}
	}
	if !strings.Contains(doc.Text, documenttest.JoinedLine) {
		t.Errorf("the hyphenated word is not joined: no %q in\n%s", documenttest.JoinedLine, doc.Text)
	}
	for _, s := range documenttest.ManualSections() {
		for _, p := range s.Paragraphs {
			if !strings.Contains(collapse(doc.Text), p) {
				t.Errorf("paragraph %q of %q is missing", p, s.Title)
			}
		}
	}
	if len(doc.PageStarts) != 5 || doc.PageStarts[0] != 0 || !slices.IsSorted(doc.PageStarts) {
		t.Fatalf("page starts %v, want one sorted start for each of 5 pages, from 0", doc.PageStarts)
	}
	// Chapter n starts page n: every chapter heading is the first block of
	// its page.
	runes := []rune(doc.Text)
	for n, title := range []string{"# 1 Introduction", "# 2 Installing", "# 3 Running", "# 4 Proxies"} {
		at := strings.TrimLeft(string(runes[doc.PageStarts[n]:]), "\n")
		if !strings.HasPrefix(at, title) {
			t.Errorf("page %d starts with %.40q, want %q", n+1, at, title)
		}
	}
}

// headingLines returns the ATX heading lines of text.
func headingLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// collapse joins text's words with single spaces.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestPDFSectionParentsKnowTheirPages splits the manual with section
// parents: the section that runs over a page break is one parent with its
// heading path and both pages.
func TestPDFSectionParentsKnowTheirPages(t *testing.T) {
	doc := readPDF(t, documenttest.Manual(t, documenttest.ManualOptions{}))
	b := sectionBuilder(t)
	var found bool
	for _, p := range b.Build(doc).Parents {
		if p.Pages == nil {
			t.Fatalf("parent %q has no pages", p.Text[:min(len(p.Text), 40)])
		}
		if slices.Equal(p.HeadingPath, []string{"4 Proxies", "4.2 Configuring the proxy"}) {
			found = true
			if p.Pages.Last != p.Pages.First+1 {
				t.Errorf("4.2 spans pages %+v, want two pages", p.Pages)
			}
		}
	}
	if !found {
		t.Error("no parent has the heading path 4 Proxies > 4.2 Configuring the proxy")
	}
}

// TestPDFWithoutOutlineHasAPageSectionPerPage checks that a PDF without
// bookmarks gets a heading per page.
func TestPDFWithoutOutlineHasAPageSectionPerPage(t *testing.T) {
	doc := readPDF(t, documenttest.Manual(t, documenttest.ManualOptions{NoOutline: true}))
	got := headingLines(doc.Text)
	if len(got) != len(doc.PageStarts) {
		t.Fatalf("%d headings for %d pages", len(got), len(doc.PageStarts))
	}
	for i, h := range got {
		if h != fmt.Sprintf("# Page %d", i+1) {
			t.Errorf("heading %d is %q", i, h)
		}
	}
}

// TestPDFLinesThatLookLikeMarkdownAreEscaped checks that text of a page
// never makes a heading or a code fence of its own.
func TestPDFLinesThatLookLikeMarkdownAreEscaped(t *testing.T) {
	doc := readPDF(t, documenttest.TextPDF(t, []string{"# a shell comment", "```", "plain line"}))
	if !strings.Contains(doc.Text, "\\# a shell comment\n\\```\nplain line") {
		t.Errorf("text %q, want the lines escaped", doc.Text)
	}
}

// TestPDFRefusals checks the PDFs that are per-document errors, each with
// its reason.
func TestPDFRefusals(t *testing.T) {
	manual := documenttest.Manual(t, documenttest.ManualOptions{})
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"encrypted":        {documenttest.Manual(t, documenttest.ManualOptions{Password: "secret"}), "encrypted: the PDF needs a password to open"},
		"scanned":          {documenttest.Scanned(t, 3), "no text layer: none of its 3 pages holds text"},
		"truncated":        {manual[:len(manual)/2], "truncated"},
		"corrupt":          {append([]byte("%PDF-1.7\n"), []byte(strings.Repeat("garbage ", 1000)+"\n%%EOF\n")...), "not a PDF, or damaged"},
		"not a PDF":        {[]byte("just text"), "not a PDF (no %PDF- header"},
		"over 10000 pages": {documenttest.RawPDF(10_001, func(int) string { return documenttest.TextStream("a line") }), "10001 pages, over the 10000-page limit"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := document.Read(document.PDF, "x.pdf", "x.pdf", tc.data)
			var fe *document.FileError
			if !errors.As(err, &fe) || fe.Path != "x.pdf" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming x.pdf and saying %q", err, tc.want)
			}
		})
	}
}

// TestPDFOf10000PagesIsReadInBoundedTime reads the largest PDF the limits
// allow, a line on each of 10,000 pages.
func TestPDFOf10000PagesIsReadInBoundedTime(t *testing.T) {
	skipShort(t)
	data := documenttest.RawPDF(10_000, func(i int) string { return documenttest.TextStream("line of page " + letters(i)) })
	var doc hierarchy.Document
	documenttest.Bounded(t, 90*time.Second, 400<<20, func() { doc = readPDF(t, data) })
	if len(doc.PageStarts) != 10_000 || !strings.Contains(doc.Text, "line of page "+letters(9_999)) {
		t.Errorf("read %d pages, want 10000 with the last one's text", len(doc.PageStarts))
	}
}

// letters names n in letters ("b", "c", ... "ba"), so that lines told
// apart by it are not running lines, which differ in their digits alone.
func letters(n int) string {
	s := ""
	for {
		s = string(rune('a'+n%26)) + s
		if n /= 26; n == 0 {
			return s
		}
	}
}

// TestPDFPageOf50MBOfTextIsRefused reads a page that shows 50 MB of text,
// compressed into a small file: it is refused within bounded time and
// memory.
func TestPDFPageOf50MBOfTextIsRefused(t *testing.T) {
	skipShort(t)
	line := strings.Repeat("x", 1000)
	page := documenttest.TextStream(slices.Repeat([]string{line}, 50_000)...)
	data := documenttest.RawPDF(1, func(int) string { return page })
	t.Logf("a page of %d MB of text in a file of %d kB", len(page)>>20, len(data)>>10)
	var err error
	documenttest.Bounded(t, 90*time.Second, pdfium.MemoryLimit+100<<20, func() {
		_, err = document.Read(document.PDF, "big.pdf", "big.pdf", data)
	})
	if err == nil || !strings.Contains(err.Error(), "big.pdf") || !(strings.Contains(err.Error(), "limit")) {
		t.Errorf("error %v, want a limit named", err)
	}
}

// TestPDFReadingStopsAtItsDeadline reads a long PDF with a deadline far
// too short: the instance is stopped and the error says so.
func TestPDFReadingStopsAtItsDeadline(t *testing.T) {
	skipShort(t)
	data := documenttest.RawPDF(5_000, func(i int) string { return documenttest.TextStream("page " + letters(i)) })
	readPDF(t, documenttest.TextPDF(t, []string{"warm up"})) // the module is compiled outside the deadline
	l := document.DefaultLimits
	l.PDFTimeout = 100 * time.Millisecond
	start := time.Now()
	_, err := l.Read(document.PDF, "slow.pdf", "slow.pdf", data)
	if err == nil || !strings.Contains(err.Error(), "took longer than 100ms") {
		t.Fatalf("error %v, want the deadline named", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("stopped after %s", took)
	}
	if doc := readPDF(t, documenttest.TextPDF(t, []string{"after the deadline"})); !strings.Contains(doc.Text, "after the deadline") {
		t.Errorf("the next PDF reads %q", doc.Text)
	}
}

// TestPDFPageStartsCountCodePoints checks page starts in a text with
// multi-byte characters.
func TestPDFPageStartsCountCodePoints(t *testing.T) {
	doc := readPDF(t, documenttest.TextPDF(t, []string{"caf\u00e9 cr\u00e8me br\u00fbl\u00e9e"}, []string{"second page"}))
	if len(doc.PageStarts) != 2 {
		t.Fatalf("page starts %v", doc.PageStarts)
	}
	rest := string([]rune(doc.Text)[doc.PageStarts[1]:])
	if !strings.Contains(rest, "second page") || strings.Contains(rest, "cr\u00e8me") || utf8.RuneCountInString(doc.Text) < doc.PageStarts[1] {
		t.Errorf("page 2 starts at %d: %q", doc.PageStarts[1], rest)
	}
}
