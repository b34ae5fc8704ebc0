package documenttest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// DOCXPart is a part of a Word document: its path in the zip archive and
// its content.
type DOCXPart struct {
	Name string
	Data []byte
}

// wordNS is the WordprocessingML namespace.
const wordNS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// DOCXBody wraps body elements (w:p, w:tbl) in a document part.
func DOCXBody(body string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
		`<w:document xmlns:w="` + wordNS + `" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:body>` +
		body + `</w:body></w:document>`)
}

// Para is a w:p of the given style ("" for none) holding text in runs,
// one per element of runs.
func Para(style string, runs ...string) string {
	var b strings.Builder
	b.WriteString("<w:p>")
	if style != "" {
		fmt.Fprintf(&b, `<w:pPr><w:pStyle w:val="%s"/></w:pPr>`, style)
	}
	for _, r := range runs {
		fmt.Fprintf(&b, `<w:r><w:t xml:space="preserve">%s</w:t></w:r>`, xmlEscape(r))
	}
	b.WriteString("</w:p>")
	return b.String()
}

// ListPara is a list paragraph of numbering num at list level ilvl.
func ListPara(num string, ilvl int, text string) string {
	return fmt.Sprintf(`<w:p><w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="%d"/><w:numId w:val="%s"/></w:numPr></w:pPr><w:r><w:t>%s</w:t></w:r></w:p>`,
		ilvl, num, xmlEscape(text))
}

// Table is a w:tbl of rows of cells, each cell one paragraph.
func Table(rows ...[]string) string {
	var b strings.Builder
	b.WriteString("<w:tbl>")
	for _, row := range rows {
		b.WriteString("<w:tr>")
		for _, cell := range row {
			b.WriteString("<w:tc>" + Para("", cell) + "</w:tc>")
		}
		b.WriteString("</w:tr>")
	}
	b.WriteString("</w:tbl>")
	return b.String()
}

// xmlEscape escapes text for XML.
func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// DOCXStyles is a styles part as Word writes one in another language: the
// style ids are not the names, so headings are told by their names.
var DOCXStyles = []byte(`<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="` + wordNS + `">` +
	`<w:style w:type="paragraph" w:styleId="Titel"><w:name w:val="Title"/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="heading 2"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/></w:style>` +
	`</w:styles>`)

// DOCXNumbering is a numbering part: numbering 1 is bullets, 2 counts.
var DOCXNumbering = []byte(`<?xml version="1.0" encoding="UTF-8"?><w:numbering xmlns:w="` + wordNS + `">` +
	`<w:abstractNum w:abstractNumId="10"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl><w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>` +
	`<w:abstractNum w:abstractNumId="20"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum>` +
	`<w:num w:numId="1"><w:abstractNumId w:val="10"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="20"/></w:num>` +
	`</w:numbering>`)

// DOCXCore is a core properties part with the given title.
func DOCXCore(title string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>` +
		xmlEscape(title) + `</dc:title></cp:coreProperties>`)
}

// DOCX zips parts into a Word document, with the content types part Word
// writes first.
func DOCX(tb testing.TB, parts ...DOCXPart) []byte {
	tb.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	all := append([]DOCXPart{{"[Content_Types].xml", []byte(`<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`)}}, parts...)
	for _, p := range all {
		w, err := zw.Create(p.Name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(p.Data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
