package document_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/document"
	dt "github.com/parentrag/parentrag/internal/document/documenttest"
)

// wordDocument is a Word document with localized style ids, a title, two
// heading levels, bullet and numbered lists, a table, a tab and a line
// break, deleted text, and a text box whose fallback repeats it.
func wordDocument(t *testing.T) []byte { return wordDocumentOf(t) }

// wordDocumentOf is wordDocument for any test or fuzz target.
func wordDocumentOf(t testing.TB) []byte {
	body := dt.Para("Titel", "Proxy guide") +
		dt.Para("", "An introduction with ", "two runs.") +
		dt.Para("berschrift1", "Installing") +
		dt.ListPara("1", 0, "Download the package") +
		dt.ListPara("1", 1, "check its signature") +
		dt.ListPara("1", 0, "Install it") +
		dt.Para("berschrift2", "Steps in order") +
		dt.ListPara("2", 0, "Stop the service") +
		dt.ListPara("2", 0, "Upgrade") +
		dt.Table([]string{"Option", "Default"}, []string{"retries", "3"}, []string{"a | b", ""}) +
		`<w:p><w:r><w:t>Key</w:t></w:r><w:r><w:tab/><w:t>value</w:t><w:br/><w:t>next line</w:t></w:r>` +
		`<w:del><w:r><w:delText>deleted words</w:delText></w:r></w:del></w:p>` +
		`<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:txbxContent>` + dt.Para("", "Boxed text") +
		`</w:txbxContent></mc:Choice><mc:Fallback><w:txbxContent>` + dt.Para("", "Boxed text") + `</w:txbxContent></mc:Fallback></mc:AlternateContent></w:r></w:p>` +
		dt.Para("", "# not a heading")
	return dt.DOCX(t,
		dt.DOCXPart{Name: "word/document.xml", Data: dt.DOCXBody(body)},
		dt.DOCXPart{Name: "word/styles.xml", Data: dt.DOCXStyles},
		dt.DOCXPart{Name: "word/numbering.xml", Data: dt.DOCXNumbering},
		dt.DOCXPart{Name: "docProps/core.xml", Data: dt.DOCXCore("The Proxy Guide")})
}

// wordMarkdown is what wordDocument reads as.
const wordMarkdown = "# Proxy guide\n\n" +
	"An introduction with two runs.\n\n" +
	"# Installing\n\n" +
	"- Download the package\n" +
	"  - check its signature\n" +
	"- Install it\n\n" +
	"## Steps in order\n\n" +
	"1. Stop the service\n" +
	"2. Upgrade\n\n" +
	"| Option | Default |\n| retries | 3 |\n| a \\| b |  |\n\n" +
	"Key value\nnext line\n\n" +
	"Boxed text\n\n" +
	"\\# not a heading\n"

// TestDOCXBecomesMarkdown checks the conversion of a Word document:
// headings by style name, lists, tables, and its core title.
func TestDOCXBecomesMarkdown(t *testing.T) {
	data := wordDocument(t)
	if f := document.Detect("upload.bin", data); f != document.DOCX {
		t.Fatalf("detected %q", f)
	}
	docs, err := document.Read(document.DOCX, "guide.docx", "guide.docx", data)
	if err != nil {
		t.Fatal(err)
	}
	if docs[0].Title != "The Proxy Guide" {
		t.Errorf("title %q", docs[0].Title)
	}
	if docs[0].Text != wordMarkdown {
		t.Errorf("text\n%q\nwant\n%q", docs[0].Text, wordMarkdown)
	}
}

// TestDOCXTitleFallsBackToTheTitleParagraph checks the title of a
// document without core properties.
func TestDOCXTitleFallsBackToTheTitleParagraph(t *testing.T) {
	data := dt.DOCX(t, dt.DOCXPart{Name: "word/document.xml", Data: dt.DOCXBody(dt.Para("Heading1", "First heading") + dt.Para("Title", "The title"))},
		dt.DOCXPart{Name: "word/styles.xml", Data: []byte(`<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:styleId="Title"><w:name w:val="Title"/></w:style><w:style w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`)})
	docs, err := document.Read(document.DOCX, "t.docx", "t", data)
	if err != nil || docs[0].Title != "The title" {
		t.Fatalf("read %+v, %v; want the title paragraph's text", docs, err)
	}
}

// zipOf zips one entry with Deflate at its best.
func zipOf(t *testing.T, name string, data []byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestCompression) })
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	zw.Close()
	return b.Bytes()
}

// TestDOCXHostileFilesAreRefused reads Word documents made to exhaust a
// reader: each is refused with its reason, within bounded time and
// memory.
func TestDOCXHostileFilesAreRefused(t *testing.T) {
	skipShort(t)
	bomb := zipOf(t, "word/document.xml", append(dt.DOCXBody(""), bytes.Repeat([]byte(" "), 1<<30)...))
	laughs := `<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY a "aaaaaaaaaa">` +
		`<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>` +
		`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&c;</w:t></w:r></w:p></w:body></w:document>`
	deep := "<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">" + strings.Repeat("<w:body>", 100_000)
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"zip bomb":         {bomb, "word/document.xml unpacks to over 67108864 bytes"},
		"billion laughs":   {dt.DOCX(t, dt.DOCXPart{Name: "word/document.xml", Data: []byte(laughs)}), "invalid character entity &c;"},
		"deep nesting":     {dt.DOCX(t, dt.DOCXPart{Name: "word/document.xml", Data: []byte(deep)}), "nest deeper than 512"},
		"not a zip":        {[]byte("PK\x03\x04 but broken"), "not a Word document"},
		"zip without body": {zipOf(t, "word/other.xml", []byte("<x/>")), "no word/document.xml"},
		"malformed XML":    {dt.DOCX(t, dt.DOCXPart{Name: "word/document.xml", Data: []byte("<w:document><w:body>")}), "malformed XML"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Logf("a file of %d kB", len(tc.data)>>10)
			var err error
			bounded(t, 20*time.Second, 300<<20, func() {
				_, err = document.Read(document.DOCX, "w.docx", "w.docx", tc.data)
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "w.docx") {
				t.Errorf("error %v, want one naming w.docx and saying %q", err, tc.want)
			}
		})
	}
}
