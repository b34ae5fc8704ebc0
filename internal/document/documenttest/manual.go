// Package documenttest makes real documents for tests: PDF manuals written
// by a PDF library (outline, running headers and footers, hyphenated line
// ends, encryption, pages without text), hand-built PDFs that stress a
// reader (thousands of pages, a page of tens of megabytes of text), Word
// documents, and HTML pages of a documentation site; and it finds the
// public documents Debian packages install, for the tests that compare
// with a reference extractor.
package documenttest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"codeberg.org/go-pdf/fpdf"
)

// Section is a section of a generated manual: its outline level (1 for a
// chapter), its title and its paragraphs.
type Section struct {
	Level      int
	Title      string
	Paragraphs []string
}

// ManualTitle is the title in the metadata of Manual's PDF.
const ManualTitle = "Acme Proxy Manual"

// RunningHeader is the line at the top of every page of Manual's PDF but
// the first; every page ends with the footer "Page N".
const RunningHeader = "Acme Proxy Manual, edition 2"

// ManualSections is the text of the manual Manual writes: four chapters,
// the last with sections, one of which ("4.2 Configuring the proxy") runs
// over a page break.
func ManualSections() []Section {
	filler := func(topic string, n int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, fmt.Sprintf("Paragraph %d about %s. The proxy keeps %s settings in its configuration file, "+
				"and an operator reviews them before each release so that every listener and route stays documented.", i, topic, topic))
		}
		return out
	}
	return []Section{
		{1, "1 Introduction", []string{"Acme Proxy forwards HTTP requests from clients to upstream servers. " +
			"It balances load, retries failed requests and writes an access log."}},
		{1, "2 Installing", append([]string{"Install the package with the system package manager, then enable the service. " +
			"The binary is called acmeproxy and reads /etc/acmeproxy/proxy.conf."}, filler("installation", 6)...)},
		{1, "3 Running", filler("running", 8)},
		{1, "4 Proxies", []string{"This chapter explains how requests travel through the proxy."}},
		{2, "4.1 Listeners", filler("listeners", 5)},
		{2, "4.2 Configuring the proxy", append([]string{"Each upstream block names a host, a port and a weight. " +
			"The proxy retries another upstream when a connection is refused, at most three times per request."}, filler("upstreams", 14)...)},
		{2, "4.3 Logging", []string{"The access log has one line per request: the time, the client address, the status code and the duration in milliseconds. " +
			"Logs rotate at midnight and seven days are kept."}},
	}
}

// HyphenatedLines are two lines Manual writes at the end of chapter 1 with
// a word hyphenated across them; JoinedLine is how a reader should give
// them.
var (
	HyphenatedLines = [2]string{"Every request is recorded, and the proxy exposes its configu-", "ration over an administrative endpoint."}
	JoinedLine      = "Every request is recorded, and the proxy exposes its configuration over an administrative endpoint."
)

// ManualOptions changes what Manual writes.
type ManualOptions struct {
	// NoOutline leaves the bookmarks out.
	NoOutline bool
	// Password, when set, encrypts the file with it as the user password.
	Password string
}

// Manual writes ManualSections as a PDF with fpdf: an outline entry per
// section, a running header and a "Page N" footer on every page, and a
// word hyphenated at a line end.
func Manual(tb testing.TB, o ManualOptions) []byte {
	tb.Helper()
	p := newPDF()
	p.SetTitle(ManualTitle, true)
	p.SetHeaderFunc(func() {
		if p.PageNo() > 1 {
			p.SetFont("Helvetica", "I", 9)
			p.CellFormat(0, 8, RunningHeader, "", 1, "R", false, 0, "")
		}
	})
	p.SetFooterFunc(func() {
		p.SetY(-15)
		p.SetFont("Helvetica", "", 9)
		p.CellFormat(0, 8, fmt.Sprintf("Page %d", p.PageNo()), "", 0, "C", false, 0, "")
	})
	if o.Password != "" {
		p.SetProtection(fpdf.CnProtectPrint, o.Password, "owner-"+o.Password)
	}
	for i, s := range ManualSections() {
		if s.Level == 1 {
			p.AddPage()
		}
		if !o.NoOutline {
			p.Bookmark(s.Title, s.Level-1, -1)
		}
		p.SetFont("Helvetica", "B", float64(18-2*s.Level))
		p.CellFormat(0, 10, s.Title, "", 1, "L", false, 0, "")
		p.SetFont("Helvetica", "", 11)
		for _, para := range s.Paragraphs {
			p.MultiCell(0, 5.5, para, "", "L", false)
			p.Ln(3)
		}
		if i == 0 {
			for _, l := range HyphenatedLines {
				p.CellFormat(0, 5.5, l, "", 1, "L", false, 0, "")
			}
		}
	}
	return output(tb, p)
}

// newPDF starts an A4 document with fixed dates, so that the same calls
// write the same bytes.
func newPDF() *fpdf.Fpdf {
	p := fpdf.New("P", "mm", "A4", "")
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p.SetCreationDate(fixed)
	p.SetModificationDate(fixed)
	p.SetAutoPageBreak(true, 20)
	return p
}

// output writes the document.
func output(tb testing.TB, p *fpdf.Fpdf) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		tb.Fatalf("writing PDF: %v", err)
	}
	return b.Bytes()
}

// Scanned writes a PDF of pages pages, each holding only an image, as a
// scanner makes them: no text layer.
func Scanned(tb testing.TB, pages int) []byte {
	tb.Helper()
	img := image.NewGray(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			img.SetGray(x, y, color.Gray{Y: uint8((x * y) % 256)})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	p := newPDF()
	p.RegisterImageOptionsReader("scan", fpdf.ImageOptions{ImageType: "PNG"}, &b)
	for range pages {
		p.AddPage()
		p.ImageOptions("scan", 10, 10, 190, 270, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	}
	return output(tb, p)
}

// TextPDF writes a PDF with fpdf whose pages hold the given lines.
func TextPDF(tb testing.TB, pages ...[]string) []byte {
	tb.Helper()
	p := newPDF()
	p.SetFont("Helvetica", "", 11)
	for _, lines := range pages {
		p.AddPage()
		for _, l := range lines {
			p.CellFormat(0, 6, l, "", 1, "L", false, 0, "")
		}
	}
	return output(tb, p)
}

// Words returns the words of text: runs of letters and digits, lower case.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !isLetterOrDigit(r) })
}
