package document

import (
	"bytes"
	"mime"
	"path"
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// Version names what this package reads and how: it changes whenever a
// format is added or a file may convert to other text, so that what
// records it (the identity of a URL source) tells content read by an
// older parentrag from content read now.
const Version = "2"

// Format is how a file is read.
type Format string

const (
	// Unknown is a file of no readable format.
	Unknown Format = ""
	// Markdown is read as it is; its first level-one heading is its title.
	Markdown Format = "Markdown"
	// PlainText is read as it is, with no title.
	PlainText Format = "Text"
	// RST is reStructuredText, read as it is; its first section title is
	// its title.
	RST Format = "reStructuredText"
	// JSONLines holds one document per line.
	JSONLines Format = "JSONLines"
	// HTML (and XHTML) is converted to Markdown: main content only.
	HTML Format = "HTML"
	// PDF is converted to Markdown: its text layer, page by page, with its
	// outline as headings.
	PDF Format = "PDF"
	// DOCX is a Word document converted to Markdown.
	DOCX Format = "DOCX"
	// Code is source code in a language LangChain's from_language knows,
	// read as it is, its language in the document's metadata.
	Code Format = "Code"
)

// formatInfo is what names a format: its file extensions and the media
// types a server may send it with.
type formatInfo struct {
	format     Format
	extensions []string
	mediaTypes []string
}

// formats lists every readable format, the first extension of each being
// the one messages name.
var formats = []formatInfo{
	{Markdown, []string{".md", ".markdown"}, []string{"text/markdown", "text/x-markdown"}},
	{PlainText, []string{".txt"}, []string{"text/plain"}},
	{RST, []string{".rst"}, []string{"text/x-rst", "text/prs.fallenstein.rst"}},
	{JSONLines, []string{".jsonl"}, []string{"application/jsonl", "application/x-ndjson", "application/x-jsonlines"}},
	{HTML, []string{".html", ".htm", ".xhtml"}, []string{"text/html", "application/xhtml+xml"}},
	{PDF, []string{".pdf"}, []string{"application/pdf"}},
	{DOCX, []string{".docx"}, []string{"application/vnd.openxmlformats-officedocument.wordprocessingml.document"}},
	{Code, split.CodeExtensions(), nil},
}

// Extensions lists the lower-case file extensions of every readable
// format, in the order of the formats.
func Extensions() []string {
	var out []string
	for _, f := range formats {
		out = append(out, f.extensions...)
	}
	return out
}

// ReadableExtensions lists the extensions of every format but source code
// for messages, ".md, .markdown, ..., .docx and source code"; code has
// dozens.
func ReadableExtensions() string {
	var exts []string
	for _, f := range formats {
		if f.format != Code {
			exts = append(exts, f.extensions...)
		}
	}
	return strings.Join(exts, ", ") + " and source code"
}

// ByName is the format a file name's extension (in any case) says, or
// Unknown.
func ByName(name string) Format {
	ext := strings.ToLower(path.Ext(name))
	for _, f := range formats {
		for _, e := range f.extensions {
			if e == ext {
				return f.format
			}
		}
	}
	return Unknown
}

// ByMediaType is the format a Content-Type header names, or Unknown.
func ByMediaType(contentType string) Format {
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return Unknown
	}
	for _, f := range formats {
		for _, m := range f.mediaTypes {
			if m == media {
				return f.format
			}
		}
	}
	return Unknown
}

// Detect is the format of data, the file called name: a PDF or a Word
// document by its content whatever its name says (a binary file cannot be
// text), else the format its extension says, else source code when its
// first line is "#!" naming a known interpreter, else HTML when the
// content starts as an HTML page does, else Unknown.
func Detect(name string, data []byte) Format {
	if f := sniffBinary(data); f != Unknown {
		return f
	}
	if f := ByName(name); f != Unknown {
		return f
	}
	if split.IsCode(split.LanguageOfShebang(string(data[:min(len(data), htmlSniffWindow)]))) {
		return Code
	}
	if looksLikeHTML(data) {
		return HTML
	}
	return Unknown
}

// pdfMagicWindow is how far into a file the PDF header may start: PDF
// readers accept up to 1024 bytes of junk before it.
const pdfMagicWindow = 1024

// sniffBinary tells a PDF and a Word document (a zip archive holding
// word/document.xml) by their bytes. A PDF starts with "%PDF-", or holds
// it in its first 1024 bytes after bytes that are not text (a text that
// merely names the header is no PDF).
func sniffBinary(data []byte) Format {
	head := data[:min(len(data), pdfMagicWindow)]
	if at := bytes.Index(head, []byte("%PDF-")); at == 0 || at > 0 && CheckText(head[:at]) != nil {
		return PDF
	}
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) && isWordArchive(data) {
		return DOCX
	}
	return Unknown
}

// htmlSniffWindow is how many leading bytes looksLikeHTML reads.
const htmlSniffWindow = 4096

// looksLikeHTML reports whether data starts, after a byte-order mark,
// white space, comments and an XML declaration, with an HTML doctype or
// an <html> tag, in any case.
func looksLikeHTML(data []byte) bool {
	s := strings.ToLower(string(data[:min(len(data), htmlSniffWindow)]))
	s = strings.TrimPrefix(s, "\ufeff")
	for {
		s = strings.TrimLeft(s, " \t\r\n\f")
		var ok bool
		switch {
		case strings.HasPrefix(s, "<!--"):
			_, s, ok = strings.Cut(s, "-->")
		case strings.HasPrefix(s, "<?xml"):
			_, s, ok = strings.Cut(s, "?>")
		default:
			return strings.HasPrefix(s, "<!doctype html") || strings.HasPrefix(s, "<html")
		}
		if !ok {
			return false
		}
	}
}

// UnsupportedMessage says why a file of no readable format is not read.
func UnsupportedMessage(name string) string {
	ext := path.Ext(name)
	if ext == "" {
		return "unsupported file type (no extension; readable: " + ReadableExtensions() + ")"
	}
	return "unsupported file type " + ext + " (readable: " + ReadableExtensions() + ")"
}
