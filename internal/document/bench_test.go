package document_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/document"
	dt "github.com/parentrag/parentrag/internal/document/documenttest"
)

// Each benchmark reads one public document with parentrag and with the
// reference extractor of its format, side by side: MB/s of input, and
// the peak memory one read takes (parentrag: the growth of the heap and of
// the resident memory; the reference: its process's resident peak).

func BenchmarkPDF(b *testing.B) {
	path := dt.Installed(b, dt.BashRefPDF, dt.BashDocPackage)
	data, _ := os.ReadFile(path)
	b.Run("parentrag", func(b *testing.B) { benchRead(b, document.PDF, data) })
	b.Run("pdftotext", func(b *testing.B) {
		benchTool(b, data, dt.Program(b, "pdftotext", dt.PopplerPackage), "-enc", "UTF-8", path, "-")
	})
}

func BenchmarkHTML(b *testing.B) {
	path := dt.Installed(b, dt.BashRefHTML, dt.BashDocPackage)
	data, _ := os.ReadFile(path)
	b.Run("parentrag", func(b *testing.B) { benchRead(b, document.HTML, data) })
	b.Run("w3m", func(b *testing.B) {
		benchTool(b, data, dt.Program(b, "w3m", "w3m"), "-dump", "-T", "text/html", "-O", "UTF-8", path)
	})
}

func BenchmarkDOCX(b *testing.B) {
	data := largeWordDocument(b)
	path := filepath.Join(b.TempDir(), "large.docx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("parentrag", func(b *testing.B) { benchRead(b, document.DOCX, data) })
	b.Run("docx2txt", func(b *testing.B) {
		benchTool(b, data, dt.Program(b, "docx2txt", "docx2txt"), path, "-")
	})
}

// largeWordDocument is a Word document of about 2 MB of XML: headings,
// paragraphs, list items and tables.
func largeWordDocument(b *testing.B) []byte {
	var body bytes.Buffer
	for i := range 400 {
		body.WriteString(dt.Para("Heading1", "Chapter about a topic"))
		for range 8 {
			body.WriteString(dt.Para("", "A paragraph of ordinary prose that explains one thing in a sentence or two, ", "as manuals do."))
		}
		body.WriteString(dt.ListPara("1", i%2, "A list item"))
		body.WriteString(dt.Table([]string{"Option", "Default"}, []string{"retries", "3"}))
	}
	return dt.DOCX(b, dt.DOCXPart{Name: "word/document.xml", Data: dt.DOCXBody(body.String())},
		dt.DOCXPart{Name: "word/styles.xml", Data: dt.DOCXStyles}, dt.DOCXPart{Name: "word/numbering.xml", Data: dt.DOCXNumbering})
}

// benchRead reads data in format f b.N times.
func benchRead(b *testing.B, f document.Format, data []byte) {
	read := func() {
		if _, err := document.Read(f, "bench", "bench", data); err != nil {
			b.Fatal(err)
		}
	}
	read() // PDFium is compiled once per process, before the timing
	u := dt.Measure(read)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		read()
	}
	b.ReportMetric(float64(max(u.Heap, u.RSS))/(1<<20), "peak-MB")
}

// benchTool runs an extractor b.N times on data (named in args), under
// GNU time, which reports its resident peak (the rusage of a child of
// the Go process would count the parent's memory it shared before exec).
func benchTool(b *testing.B, data []byte, tool string, args ...string) {
	timer := dt.Program(b, "/usr/bin/time", "time")
	report := filepath.Join(b.TempDir(), "peak")
	var peakKB int64
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		cmd := exec.Command(timer, append([]string{"-f", "%M", "-o", report, tool}, args...)...)
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		out, _ := os.ReadFile(report)
		kb, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		peakKB = max(peakKB, kb)
	}
	b.ReportMetric(float64(peakKB)/1024, "peak-MB")
}
