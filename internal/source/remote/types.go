package remote

import (
	"mime"
	"path"
	"strings"

	"github.com/parentrag/parentrag/internal/source"
)

// docType is how a file is read.
type docType int

const (
	unsupportedType docType = iota
	markdownType
	textType
	rstType
	jsonlType // JSON Lines: one document per line
)

// typeByExtension maps the lower-case extensions read to their types.
var typeByExtension = map[string]docType{
	".md": markdownType, ".markdown": markdownType,
	".txt":   textType,
	".rst":   rstType,
	".jsonl": jsonlType,
}

// readableExtensions lists typeByExtension's keys for messages.
const readableExtensions = ".md, .markdown, .txt, .rst, .jsonl"

// typeByMediaType maps the Content-Type media types of single files whose
// URL has no readable extension.
var typeByMediaType = map[string]docType{
	"text/markdown": markdownType, "text/x-markdown": markdownType,
	"text/plain": textType,
	"text/x-rst": rstType, "text/prs.fallenstein.rst": rstType,
	"application/jsonl": jsonlType, "application/x-ndjson": jsonlType, "application/x-jsonlines": jsonlType,
}

// typeOfName is the type of a file by its extension, in any case.
func typeOfName(name string) docType {
	return typeByExtension[strings.ToLower(path.Ext(name))]
}

// typeOfSingle is the type of a single file: by its name, else by the
// response's Content-Type.
func typeOfSingle(name, contentType string) docType {
	if t := typeOfName(name); t != unsupportedType {
		return t
	}
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return unsupportedType
	}
	return typeByMediaType[media]
}

// unsupportedMessage says why a file of an unknown type is not read.
func unsupportedMessage(name string) string {
	ext := path.Ext(name)
	if ext == "" {
		return "unsupported file type (no extension; readable: " + readableExtensions + ")"
	}
	return "unsupported file type " + ext + " (readable: " + readableExtensions + ")"
}

// titleOf gives a text document its title: the first level-one heading of
// Markdown, the first section title of reStructuredText, else (and always
// for plain text) the file name.
func titleOf(t docType, name, text string) string {
	var title string
	switch t {
	case markdownType:
		title = source.MarkdownTitle(text)
	case rstType:
		title = rstTitle(text)
	}
	if title == "" {
		return path.Base(name)
	}
	return title
}

// rstTitleLines is how many lines rstTitle looks at.
const rstTitleLines = 50

// rstTitle returns the first section title among the first lines of
// reStructuredText: a line of text underlined by a line of one repeated
// punctuation character at least as long (an overline may precede it).
func rstTitle(text string) string {
	lines := strings.SplitN(strings.TrimPrefix(text, "\ufeff"), "\n", rstTitleLines+1)
	for i := 0; i+1 < len(lines) && i < rstTitleLines; i++ {
		title := strings.TrimSpace(lines[i])
		under := strings.TrimRight(lines[i+1], " \t\r")
		if title != "" && !isAdornment(title) && isAdornment(under) && len([]rune(under)) >= len([]rune(title)) {
			return title
		}
	}
	return ""
}

// isAdornment reports whether line is two or more of one ASCII punctuation
// character, as reStructuredText section adornments are.
func isAdornment(line string) bool {
	if len(line) < 2 || !strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", rune(line[0])) {
		return false
	}
	return strings.Count(line, line[:1]) == len(line)
}
