package document_test

import (
	"testing"

	"github.com/parentrag/parentrag/internal/document"
	dt "github.com/parentrag/parentrag/internal/document/documenttest"
)

// TestDetect checks that binary formats are told by their bytes, text
// formats by their names, and HTML by how it starts when the name says
// nothing.
func TestDetect(t *testing.T) {
	pdf := dt.TextPDF(t, []string{"x"})
	docx := dt.DOCX(t, dt.DOCXPart{Name: "word/document.xml", Data: dt.DOCXBody("")})
	otherZip := dt.DOCX(t, dt.DOCXPart{Name: "readme.txt", Data: []byte("x")})
	for _, tt := range []struct {
		name string
		data []byte
		want document.Format
	}{
		{"manual.pdf", pdf, document.PDF},
		{"manual", pdf, document.PDF},
		{"notes.txt", pdf, document.PDF}, // a binary file cannot be text
		{"junk-first.bin", append([]byte("\x00\x01junk"), pdf...), document.PDF},
		{"notes.txt", []byte("The header is %PDF-1.7, said the text."), document.PlainText},
		{"guide.docx", docx, document.DOCX},
		{"guide", docx, document.DOCX},
		{"bundle.docx", otherZip, document.DOCX}, // the name says so; reading it says it is not
		{"bundle.zip", otherZip, document.Unknown},
		{"page.HTML", []byte("anything"), document.HTML},
		{"page.xhtml", []byte("<html/>"), document.HTML},
		{"page", []byte("\ufeff  <!-- built --> <!DOCTYPE html><html>"), document.HTML},
		{"page", []byte(`<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml">`), document.HTML},
		{"page", []byte("<p>a fragment</p>"), document.Unknown},
		{"README.md", []byte("<!DOCTYPE html>"), document.Markdown}, // the name wins among texts
		{"a.markdown", nil, document.Markdown},
		{"a.rst", nil, document.RST},
		{"c.JSONL", nil, document.JSONLines},
		{"image.png", []byte("\x89PNG\r\n"), document.Unknown},
	} {
		if got := document.Detect(tt.name, tt.data); got != tt.want {
			t.Errorf("Detect(%q, %.20q) = %q, want %q", tt.name, tt.data, got, tt.want)
		}
	}
}

func TestByMediaType(t *testing.T) {
	for ct, want := range map[string]document.Format{
		"text/html; charset=utf-8": document.HTML,
		"application/xhtml+xml":    document.HTML,
		"application/pdf":          document.PDF,
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document": document.DOCX,
		"text/markdown":        document.Markdown,
		"application/x-ndjson": document.JSONLines,
		"image/png":            document.Unknown,
		"not a media type":     document.Unknown,
	} {
		if got := document.ByMediaType(ct); got != want {
			t.Errorf("ByMediaType(%q) = %q, want %q", ct, got, want)
		}
	}
}

// TestUnknownBinaryStaysAClearError checks what a file of no known format
// says when read as text.
func TestUnknownBinaryStaysAClearError(t *testing.T) {
	_, err := document.Read(document.Markdown, "image.png", "image.png", []byte("\x89PNG\r\n\x1a\n\x00\x00"))
	if err == nil || err.Error() != "image.png: binary file (NUL byte at offset 8)" {
		t.Errorf("error %v", err)
	}
}

// TestReadersRecordWhatTheyRead checks the metadata a policy chooses
// splitters by: the format of converted documents, the language of code,
// nothing for text formats.
func TestReadersRecordWhatTheyRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		key  string
		want string
	}{
		{"page.html", []byte("<p>x</p>"), "format", "HTML"},
		{"m.pdf", dt.TextPDF(t, []string{"x"}), "format", "PDF"},
		{"w.docx", dt.DOCX(t, dt.DOCXPart{Name: "word/document.xml", Data: dt.DOCXBody(dt.Para("", "x"))}), "format", "DOCX"},
		{"main.go", []byte("package main\n"), "language", "go"},
		{"tool", []byte("#!/usr/bin/env python3\nprint(1)\n"), "language", "python"},
		{"a.md", []byte("# A\n"), "", ""},
	} {
		docs, err := document.Read(document.Detect(tc.name, tc.data), tc.name, tc.name, tc.data)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := docs[0].Metadata[tc.key]; tc.key != "" && got != tc.want || tc.key == "" && docs[0].Metadata != nil {
			t.Errorf("%s: metadata %v, want %s=%q", tc.name, docs[0].Metadata, tc.key, tc.want)
		}
	}
}
