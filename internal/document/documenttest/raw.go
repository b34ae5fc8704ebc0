package documenttest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// RawPage is the content of one page of RawPDF: a content stream, shared
// by every page that names the same one.
type RawPage struct {
	// Stream is the page's content stream, PDF operators.
	Stream string
}

// TextStream is a content stream that shows each line in 10-point
// Helvetica, top to bottom.
func TextStream(lines ...string) string {
	var b strings.Builder
	b.WriteString("BT /F1 10 Tf 12 TL 50 800 Td\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "(%s) Tj T*\n", escapePDFString(l))
	}
	b.WriteString("ET\n")
	return b.String()
}

// escapePDFString escapes a PDF literal string.
func escapePDFString(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}

// RawPDF builds a PDF by hand: pages pages, page i showing stream(i), the
// streams compressed with Flate and written once each (pages that get the
// same stream share one object), in Helvetica. It is the way to a file no
// PDF library writes: ten thousand pages in a few kilobytes, or one page
// of tens of megabytes of text.
func RawPDF(pages int, stream func(i int) string) []byte {
	w := &rawWriter{}
	w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	// Objects: 1 catalog, 2 pages, 3 font, then the streams, then the pages.
	streamObj := map[string]int{}
	var order []string
	for i := range pages {
		s := stream(i)
		if _, ok := streamObj[s]; !ok {
			streamObj[s] = 4 + len(order)
			order = append(order, s)
		}
	}
	firstPage := 4 + len(order)
	kids := make([]string, pages)
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", firstPage+i)
	}
	w.object(1, "<< /Type /Catalog /Pages 2 0 R >>")
	w.object(2, fmt.Sprintf("<< /Type /Pages /Count %d /Kids [%s] >>", pages, strings.Join(kids, " ")))
	w.object(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for _, s := range order {
		w.stream(streamObj[s], s)
	}
	for i := range pages {
		w.object(firstPage+i, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", streamObj[stream(i)]))
	}
	return w.finish(firstPage + pages)
}

// rawWriter writes PDF objects and the cross-reference table.
type rawWriter struct {
	buf     bytes.Buffer
	offsets map[int]int
}

// object writes object n.
func (w *rawWriter) object(n int, body string) {
	if w.offsets == nil {
		w.offsets = map[int]int{}
	}
	w.offsets[n] = w.buf.Len()
	fmt.Fprintf(&w.buf, "%d 0 obj\n%s\nendobj\n", n, body)
}

// stream writes object n as a Flate-compressed stream of data.
func (w *rawWriter) stream(n int, data string) {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write([]byte(data))
	zw.Close()
	w.offsets[n] = w.buf.Len()
	fmt.Fprintf(&w.buf, "%d 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n", n, z.Len())
	w.buf.Write(z.Bytes())
	w.buf.WriteString("\nendstream\nendobj\n")
}

// finish writes the cross-reference table and trailer for objects 1 to
// last-1 and returns the file.
func (w *rawWriter) finish(last int) []byte {
	xref := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", last)
	for n := 1; n < last; n++ {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", w.offsets[n])
	}
	fmt.Fprintf(&w.buf, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", last, xref)
	return w.buf.Bytes()
}
